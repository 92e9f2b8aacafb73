package crtx

// Environment is one of the two ledgers: mainnet (real funds) and devnet
// (no real funds). Nothing moves between them.
type Environment string

const (
	Mainnet Environment = "mainnet"
	Devnet  Environment = "devnet"
)

// Environments lists both, mainnet first.
var Environments = []Environment{Mainnet, Devnet}

// Valid reports whether e is mainnet or devnet.
func (e Environment) Valid() bool { return e == Mainnet || e == Devnet }

// ParseEnvironment returns an invalid_request error naming field for anything
// but "mainnet" or "devnet".
func ParseEnvironment(field, s string) (Environment, error) {
	e := Environment(s)
	if !e.Valid() {
		return "", Errorf(CodeInvalidRequest, "%s must be \"mainnet\" or \"devnet\"", field)
	}
	return e, nil
}
