ALTER TABLE "provider_exchanges" ALTER COLUMN "provider_request_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "provider_exchanges" ALTER COLUMN "transaction_id" DROP NOT NULL;