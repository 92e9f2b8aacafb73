-- An x402 payment names the scheme it pays by, which settles it (package
-- payment); every payment before this one was exact.
ALTER TABLE x402_payments ADD COLUMN scheme TEXT NOT NULL DEFAULT 'exact';
