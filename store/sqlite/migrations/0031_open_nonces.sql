-- A wallet's open listing nonce is found by its wallet: the creator
-- console serves its listing form again with the one it holds, rather
-- than issue one on every page view (Listings.OpenListingNonce).
CREATE INDEX auth_nonces_open ON auth_nonces (wallet, expires_at) WHERE used_at IS NULL;
