-- A caller's disputes are listed by the wallet that opened them.
CREATE INDEX disputes_wallet ON disputes (wallet, opened_at);
