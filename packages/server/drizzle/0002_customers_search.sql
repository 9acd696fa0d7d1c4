-- Customer search (GET /v1/customers?search=): case-insensitive substring over four fields.
-- pg_trgm is a trusted extension (PostgreSQL 13+); PGlite opens with it loaded.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
-- The expression must stay token for token the one in services/customers/list.ts (searchDocument),
-- or the planner cannot match the query to this index.
CREATE INDEX IF NOT EXISTS "customers_search_trgm_idx" ON "customers" USING gin (
  lower("first_name" || ' ' || "last_name" || ' ' || coalesce("identification_number", '') || ' ' || coalesce("reference_id", '')) gin_trgm_ops
);
