package chain

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/crtx-market/crtx"
)

// Status looks a signature up in the cluster's whole history.
func (c *Client) Status(ctx context.Context, signature string) (crtx.ChainStatus, error) {
	sig, err := solana.SignatureFromBase58(signature)
	if err != nil {
		return crtx.ChainStatus{}, fmt.Errorf("%w: signature %q: %w", ErrAddress, signature, err)
	}
	return status(ctx, c.rpc, sig)
}

// status reads a signature's status; its confirmationStatus, not any
// commitment parameter, says whether it is finalized.
func status(ctx context.Context, cl *rpc.Client, sig solana.Signature) (crtx.ChainStatus, error) {
	out, err := cl.GetSignatureStatuses(ctx, true, sig)
	if err != nil {
		return crtx.ChainStatus{}, fmt.Errorf("reading the status of %s: %w", sig, err)
	}
	if len(out.Value) == 0 || out.Value[0] == nil {
		return crtx.ChainStatus{}, nil
	}
	v := out.Value[0]
	st := crtx.ChainStatus{
		Found:     true,
		Finalized: v.ConfirmationStatus == rpc.ConfirmationStatusFinalized,
		Confirmed: v.ConfirmationStatus == rpc.ConfirmationStatusFinalized || v.ConfirmationStatus == rpc.ConfirmationStatusConfirmed,
		Slot:      v.Slot,
	}
	if v.Err != nil {
		b, err := json.Marshal(v.Err)
		if err != nil {
			b = []byte(fmt.Sprint(v.Err))
		}
		st.Err = string(b)
	}
	return st, nil
}

// finalized reads the statuses of sigs, at most 256 a call as the RPC
// allows, and reports which are finalized.
func finalized(ctx context.Context, cl *rpc.Client, sigs []solana.Signature) (map[solana.Signature]bool, error) {
	done := make(map[solana.Signature]bool, len(sigs))
	for start := 0; start < len(sigs); start += 256 {
		batch := sigs[start:min(start+256, len(sigs))]
		out, err := cl.GetSignatureStatuses(ctx, true, batch...)
		if err != nil {
			return nil, fmt.Errorf("reading signature statuses: %w", err)
		}
		for i, v := range out.Value {
			if i < len(batch) && v != nil && v.Err == nil && v.ConfirmationStatus == rpc.ConfirmationStatusFinalized {
				done[batch[i]] = true
			}
		}
	}
	return done, nil
}
