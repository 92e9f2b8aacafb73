-- A2A push-notification configs, one row per task and config id. Each row
-- is also its delivery: once its execution has ended it is claimed,
-- POSTed to url and retried until delivered, like a webhook.
CREATE TABLE a2a_push_configs (
    task_id          TEXT NOT NULL,
    id               TEXT NOT NULL,
    wallet           TEXT NOT NULL,
    url              TEXT NOT NULL,
    token            TEXT NOT NULL DEFAULT '',
    auth_scheme      TEXT NOT NULL DEFAULT '',
    auth_credentials TEXT NOT NULL DEFAULT '',
    created_at       BIGINT NOT NULL,
    attempts         BIGINT NOT NULL DEFAULT 0,
    next_at          BIGINT NOT NULL,
    delivered_at     BIGINT,
    last_error       TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (task_id, id)
);
CREATE INDEX a2a_push_configs_due ON a2a_push_configs (next_at) WHERE delivered_at IS NULL;
