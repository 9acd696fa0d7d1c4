ALTER TABLE "reports" ADD COLUMN "subject" text;--> statement-breakpoint
CREATE UNIQUE INDEX "reports_subject_idx" ON "reports" USING btree ("customer_id","type","subject") WHERE replaces is null and subject is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "reports_replaces_idx" ON "reports" USING btree ("replaces") WHERE replaces is not null;--> statement-breakpoint
-- Hand-written: a report is never updated (docs/investments.md, Reports); a correction is a new row.
CREATE OR REPLACE FUNCTION "reports_refuse_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'reports are immutable: write a correction that replaces report %', OLD."id";
END;
$$;--> statement-breakpoint
CREATE TRIGGER "reports_immutable" BEFORE UPDATE ON "reports" FOR EACH ROW EXECUTE FUNCTION "reports_refuse_update"();
