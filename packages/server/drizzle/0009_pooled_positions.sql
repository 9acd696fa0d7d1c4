CREATE TABLE "pooled_positions" (
	"stock_id" text NOT NULL,
	"date" text NOT NULL,
	"units" numeric(20, 4) NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pooled_positions_stock_id_date_pk" PRIMARY KEY("stock_id","date")
);
--> statement-breakpoint
ALTER TABLE "pooled_positions" ADD CONSTRAINT "pooled_positions_stock_id_stocks_id_fk" FOREIGN KEY ("stock_id") REFERENCES "public"."stocks"("id") ON DELETE no action ON UPDATE no action;