CREATE TABLE "market_holidays" (
	"market" text NOT NULL,
	"date" text NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "market_holidays_market_date_pk" PRIMARY KEY("market","date")
);
--> statement-breakpoint
CREATE TABLE "prices" (
	"id" text PRIMARY KEY NOT NULL,
	"stock_id" text NOT NULL,
	"price" numeric(18, 4) NOT NULL,
	"as_of" timestamp with time zone NOT NULL,
	"source" text NOT NULL,
	"status" text NOT NULL,
	"reference" numeric(18, 4),
	"decided_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "stocks" ADD COLUMN "investment_type" text DEFAULT 'STOCK' NOT NULL;--> statement-breakpoint
ALTER TABLE "stocks" ADD COLUMN "isin" text;--> statement-breakpoint
ALTER TABLE "stocks" ADD COLUMN "market" text DEFAULT 'XNAI' NOT NULL;--> statement-breakpoint
ALTER TABLE "stocks" ADD COLUMN "min_order_amount" numeric(18, 2);--> statement-breakpoint
ALTER TABLE "stocks" ADD COLUMN "fractional" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "stocks" ADD COLUMN "price_as_of" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "prices" ADD CONSTRAINT "prices_stock_id_stocks_id_fk" FOREIGN KEY ("stock_id") REFERENCES "public"."stocks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "prices_stock_as_of_idx" ON "prices" USING btree ("stock_id","as_of" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "prices_held_idx" ON "prices" USING btree ("status") WHERE status = 'HELD';--> statement-breakpoint
UPDATE "stocks" SET "price_as_of" = "updated_at" WHERE "price_as_of" IS NULL;--> statement-breakpoint
INSERT INTO "prices" ("id", "stock_id", "price", "as_of", "source", "status", "created_at")
SELECT 'c' || substr(md5("id" || ':first-price'), 1, 24), "id", "price", "updated_at", 'IMPORT', 'APPLIED', "updated_at" FROM "stocks";
