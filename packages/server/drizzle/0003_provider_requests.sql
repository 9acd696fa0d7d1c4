CREATE TABLE "provider_exchanges" (
	"id" text PRIMARY KEY NOT NULL,
	"provider_request_id" text NOT NULL,
	"transaction_id" text NOT NULL,
	"kind" text NOT NULL,
	"operation" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"latency_ms" integer,
	"http_status" integer,
	"provider_ids" jsonb,
	"request_body" jsonb,
	"response_body" jsonb,
	"note" text
);
--> statement-breakpoint
CREATE TABLE "provider_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"transaction_id" text NOT NULL,
	"organization_id" text NOT NULL,
	"adapter" text NOT NULL,
	"operation" text NOT NULL,
	"state" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"locked_until" timestamp with time zone,
	"provider_ids" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"claimed" jsonb,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "provider_exchanges" ADD CONSTRAINT "provider_exchanges_provider_request_id_provider_requests_id_fk" FOREIGN KEY ("provider_request_id") REFERENCES "public"."provider_requests"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "provider_requests" ADD CONSTRAINT "provider_requests_transaction_id_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "provider_requests" ADD CONSTRAINT "provider_requests_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "provider_exchanges_transaction_idx" ON "provider_exchanges" USING btree ("transaction_id","at");--> statement-breakpoint
CREATE UNIQUE INDEX "provider_requests_transaction_key" ON "provider_requests" USING btree ("transaction_id");--> statement-breakpoint
CREATE INDEX "provider_requests_due_idx" ON "provider_requests" USING btree ("state","next_attempt_at");--> statement-breakpoint
CREATE INDEX "provider_requests_ids_idx" ON "provider_requests" USING gin ("provider_ids" jsonb_path_ops);