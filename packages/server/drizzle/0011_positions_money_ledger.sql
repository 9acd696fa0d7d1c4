CREATE TABLE "money_entries" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"order_id" text NOT NULL,
	"transaction_id" text NOT NULL,
	"kind" text NOT NULL,
	"amount" numeric(18, 2) NOT NULL,
	"currency" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "money_entries_transaction_id_unique" UNIQUE("transaction_id")
);
--> statement-breakpoint
ALTER TABLE "holdings" ADD COLUMN "pending_units" numeric(20, 4) DEFAULT '0' NOT NULL;--> statement-breakpoint
ALTER TABLE "money_entries" ADD CONSTRAINT "money_entries_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "money_entries" ADD CONSTRAINT "money_entries_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "money_entries" ADD CONSTRAINT "money_entries_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "money_entries" ADD CONSTRAINT "money_entries_transaction_id_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "money_entries_order_idx" ON "money_entries" USING btree ("order_id");--> statement-breakpoint
UPDATE "holdings" h SET "pending_units" = least(h."units", p."units")
FROM (SELECT o."customer_id", e."stock_id", sum(e."units") AS "units" FROM "executions" e JOIN "orders" o ON o."id" = e."order_id"
  WHERE e."status" = 'FILLED' AND e."side" = 'BUY' GROUP BY o."customer_id", e."stock_id") p
WHERE h."customer_id" = p."customer_id" AND h."stock_id" = p."stock_id";--> statement-breakpoint
INSERT INTO "money_entries" ("id", "organization_id", "customer_id", "order_id", "transaction_id", "kind", "amount", "currency", "created_at")
SELECT 'c' || substr(md5(t."id" || ':money'), 1, 24), t."organization_id", o."customer_id", o."id", t."id",
  CASE WHEN t."type" = 'INCOMING' THEN 'COLLECTION' WHEN o."side" = 'SELL' THEN 'PAYOUT' ELSE 'REFUND' END,
  CASE WHEN t."type" = 'INCOMING' THEN t."amount" ELSE -t."amount" END, t."currency", coalesce(t."settled_at", t."updated_at")
FROM "transactions" t JOIN "orders" o ON o."id" = t."order_id"
WHERE t."status" = 'SUCCESS'
  OR (t."type" = 'INCOMING' AND t."failure_reason" IN ('paid after the order was cancelled; refunded', 'paid after the order had failed; refunded'));
