CREATE TABLE "executions" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"order_id" text NOT NULL,
	"stock_id" text NOT NULL,
	"side" text NOT NULL,
	"units" numeric(20, 4) NOT NULL,
	"price" numeric(18, 4) NOT NULL,
	"price_as_of" timestamp with time zone,
	"executed_at" timestamp with time zone NOT NULL,
	"settlement_date" text NOT NULL,
	"status" text NOT NULL,
	"settled_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "executions" ADD CONSTRAINT "executions_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "executions" ADD CONSTRAINT "executions_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "executions" ADD CONSTRAINT "executions_stock_id_stocks_id_fk" FOREIGN KEY ("stock_id") REFERENCES "public"."stocks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "executions_order_key" ON "executions" USING btree ("order_id");--> statement-breakpoint
CREATE INDEX "executions_filled_idx" ON "executions" USING btree ("settlement_date") WHERE status = 'FILLED';--> statement-breakpoint
INSERT INTO "executions" ("id", "organization_id", "order_id", "stock_id", "side", "units", "price", "executed_at", "settlement_date", "status", "settled_at")
SELECT 'c' || substr(md5(o."id" || ':execution'), 1, 24), o."organization_id", o."id", o."stock_id", o."side", o."quantity", o."price", o."updated_at",
  s."day"::text,
  CASE WHEN s."day" <= (now() AT TIME ZONE 'Africa/Nairobi')::date THEN 'SETTLED' ELSE 'FILLED' END,
  CASE WHEN s."day" <= (now() AT TIME ZONE 'Africa/Nairobi')::date THEN now() END
FROM "orders" o
CROSS JOIN LATERAL (
  SELECT d::date AS "day" FROM generate_series((o."updated_at" AT TIME ZONE 'Africa/Nairobi')::date + 1,
    (o."updated_at" AT TIME ZONE 'Africa/Nairobi')::date + 10, interval '1 day') d
  WHERE extract(isodow FROM d) < 6 ORDER BY d OFFSET 2 LIMIT 1
) s
WHERE o."status" = 'EXECUTED' AND o."quantity" IS NOT NULL AND o."price" IS NOT NULL;
