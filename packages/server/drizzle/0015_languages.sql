ALTER TABLE "customers" ADD COLUMN "language" text;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "language" text DEFAULT 'en' NOT NULL;