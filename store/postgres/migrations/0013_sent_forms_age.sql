-- Every form older than a day goes as any form is sent, a wallet's that
-- sends nothing more included: the sweep reads forms by age alone.
DROP INDEX sent_forms_age;
CREATE INDEX sent_forms_age ON sent_forms (sent_at);
