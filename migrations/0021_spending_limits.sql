-- Spending limits (docs/billing.md "Spending limits"): a budget of GPU-hours
-- per period for an org and for a project, NULL for none. A JSON document
-- (store/settings_repository.cc writes and reads it):
--   {"gpu_hours": 100, "period": {"calendar_month": {"time_zone": "Europe/Berlin"}}
--                      or {"rolling_seconds": 86400},
--    "warn_at_percent": [80, 100], "action": "block_new"}
-- The group commit reads it for the orgs and projects of the placements it
-- judges, so no cache can let a placement past a limit just set.
ALTER TABLE org_settings ADD COLUMN spending_limit jsonb;
ALTER TABLE project_settings ADD COLUMN spending_limit jsonb;
