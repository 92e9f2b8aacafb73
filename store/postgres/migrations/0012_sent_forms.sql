-- The forms of the pages are sent once: a token claimed here is refused
-- the second time (a reload, Back, a double click), and the replay is shown
-- what the first sending led to. An owner's forms older than a day go as
-- it sends new ones.
CREATE TABLE sent_forms (
    owner   TEXT NOT NULL,
    token   TEXT NOT NULL,
    sent_at BIGINT NOT NULL,
    outcome BYTEA,
    PRIMARY KEY (owner, token)
);
CREATE INDEX sent_forms_age ON sent_forms (owner, sent_at);
