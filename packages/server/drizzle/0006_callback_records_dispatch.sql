ALTER TABLE "provider_exchanges" ADD COLUMN "source_address" text;--> statement-breakpoint
ALTER TABLE "provider_exchanges" ADD COLUMN "confirmed" boolean;--> statement-breakpoint
ALTER TABLE "provider_exchanges" ADD COLUMN "claim" jsonb;--> statement-breakpoint
ALTER TABLE "provider_requests" ADD COLUMN "dispatched_at" timestamp with time zone;--> statement-breakpoint
-- Requests that may already have been sent before this column existed count as dispatched: only a
-- request claimed and never marked is re-sent after a crash.
UPDATE "provider_requests" SET "dispatched_at" = "updated_at" WHERE "state" IN ('SENDING', 'AWAITING', 'UNCERTAIN', 'OPERATOR');
