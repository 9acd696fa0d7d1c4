CREATE TABLE "sms_messages" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"msisdn" text NOT NULL,
	"kind" text NOT NULL,
	"event_key" text NOT NULL,
	"language" text NOT NULL,
	"text" text NOT NULL,
	"state" text DEFAULT 'QUEUED' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"unconfirmed_sends" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"locked_until" timestamp with time zone,
	"gateway_message_id" text,
	"status_code" integer,
	"gateway_status" text,
	"cost" text,
	"delivery_status" text,
	"failure_reason" text,
	"last_error" text,
	"sent_at" timestamp with time zone,
	"delivered_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "sms_enabled" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "sms_messages" ADD CONSTRAINT "sms_messages_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_messages" ADD CONSTRAINT "sms_messages_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "sms_messages_event_key_idx" ON "sms_messages" USING btree ("event_key");--> statement-breakpoint
CREATE INDEX "sms_messages_due_idx" ON "sms_messages" USING btree ("state","next_attempt_at");--> statement-breakpoint
CREATE INDEX "sms_messages_gateway_id_idx" ON "sms_messages" USING btree ("gateway_message_id");--> statement-breakpoint
CREATE INDEX "sms_messages_org_created_idx" ON "sms_messages" USING btree ("organization_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "sms_messages_msisdn_idx" ON "sms_messages" USING btree ("msisdn","created_at" DESC NULLS LAST);