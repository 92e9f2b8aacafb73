package a2a

import (
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// resultArtifact is the id of a completed task's one artifact.
const resultArtifact a2a.ArtifactID = "result"

// state is the A2A state of an execution. A disputed execution completed
// (its dispute is the marketplace's business, not the protocol's); a
// cancelled one failed with the code "cancelled" before it was dispatched.
func state(e crtx.Execution) a2a.TaskState {
	switch e.Status {
	case crtx.ExecPending:
		return a2a.TaskStateSubmitted
	case crtx.ExecRunning:
		return a2a.TaskStateWorking
	case crtx.ExecCompleted, crtx.ExecDisputed:
		return a2a.TaskStateCompleted
	}
	if e.ErrorCode == crtx.CodeCancelled {
		return a2a.TaskStateCanceled
	}
	return a2a.TaskStateFailed
}

// stateTime is when an execution entered its current state.
func stateTime(e crtx.Execution) time.Time {
	switch {
	case e.CompletedAt != nil:
		return e.CompletedAt.UTC()
	case e.DispatchedAt != nil:
		return e.DispatchedAt.UTC()
	}
	return e.InitiatedAt.UTC()
}

// contextOf is a task's context: the one the client's message named, else
// the execution's id. Each execution stands alone, so nothing else joins a
// context, and a context named by the client is not kept: read back later,
// a task's context is its id.
func contextOf(e crtx.Execution, contextID string) string {
	if contextID != "" {
		return contextID
	}
	return e.ID
}

// task is the A2A task of execution e; result is its result, and
// artifacts says whether to attach it (ListTasks leaves it out unless
// asked).
func (s *server) task(e crtx.Execution, result, contextID string, artifacts bool) *a2a.Task {
	t := &a2a.Task{ID: a2a.TaskID(e.ID), ContextID: contextOf(e, contextID), Status: s.status(e, contextID)}
	if artifacts && state(e) == a2a.TaskStateCompleted {
		t.Artifacts = []*a2a.Artifact{s.artifact(e, result)}
	}
	return t
}

// status is the task status of e: for a failure, a message from the agent
// with the error's code and message, as the REST record's error holds them.
func (s *server) status(e crtx.Execution, contextID string) a2a.TaskStatus {
	at := stateTime(e)
	st := a2a.TaskStatus{State: state(e), Timestamp: &at}
	if e.Status == crtx.ExecFailed {
		st.Message = &a2a.Message{ID: e.ID + "-error", Role: a2a.MessageRoleAgent, TaskID: a2a.TaskID(e.ID),
			ContextID: contextOf(e, contextID), Parts: a2a.ContentParts{
				a2a.NewTextPart(e.ErrorMessage),
				{Content: a2a.Data{Value: map[string]any{"code": e.ErrorCode, "message": e.ErrorMessage, "execution_id": e.ID}},
					MediaType: "application/json"},
			}}
	}
	return st
}

// artifact is a completed execution's result: the text as the creator
// signed it, and the facts needed to check it and find it on the ledger.
func (s *server) artifact(e crtx.Execution, result string) *a2a.Artifact {
	rec := api.NewExecutionRecord(e, result, s.m.Links())
	var hash, ipfs any
	if rec.ResultHash != nil {
		hash = *rec.ResultHash
	}
	if rec.IPFSURL != nil {
		ipfs = *rec.IPFSURL
	}
	return &a2a.Artifact{ID: resultArtifact, Name: "result",
		Description: "The agent's result, signed by its creator, and its settlement: result_hash is the SHA-256 of the text, " +
			"ipfs_url serves the exact bytes, on_chain_record is the execution's record on the crtx ledger.",
		Parts: a2a.ContentParts{
			{Content: a2a.Text(result), MediaType: "text/plain"},
			{Content: a2a.Data{Value: settlement(e, rec, hash, ipfs)}, MediaType: "application/json"},
		}}
}

// settlement is the data part of a result artifact: the execution, what it
// cost and where its result is; for an agent priced per token, also the
// usage its creator signed and what the escrow held and returned.
func settlement(e crtx.Execution, rec api.ExecutionRecord, hash, ipfs any) map[string]any {
	data := map[string]any{
		"execution_id":    e.ID,
		"status":          string(e.Status),
		"cost_usdc":       decimal(e.Cost),
		"result_hash":     hash,
		"ipfs_url":        ipfs,
		"on_chain_record": rec.OnChainRecord,
	}
	if mv := rec.Metered; mv != nil && mv.TokensUsed != nil && mv.UsageSignature != nil {
		data["tokens_used"], data["usage_signature"] = *mv.TokensUsed, *mv.UsageSignature
		data["held_usdc"], data["returned_usdc"] = decimal(mv.Held), decimal(mv.Returned)
	}
	return data
}

// statusEvent is the stream event of e's new state.
func (s *server) statusEvent(e crtx.Execution, contextID string) *a2a.TaskStatusUpdateEvent {
	return &a2a.TaskStatusUpdateEvent{TaskID: a2a.TaskID(e.ID), ContextID: contextOf(e, contextID), Status: s.status(e, contextID)}
}

// pieceEvent is a piece of a streamed result: a chunk of the result
// artifact, appended to the ones before it.
func (s *server) pieceEvent(e crtx.Execution, text string, appended bool, contextID string) *a2a.TaskArtifactUpdateEvent {
	return &a2a.TaskArtifactUpdateEvent{TaskID: a2a.TaskID(e.ID), ContextID: contextOf(e, contextID), Append: appended,
		Artifact: &a2a.Artifact{ID: resultArtifact, Name: "result", Parts: a2a.ContentParts{{Content: a2a.Text(text), MediaType: "text/plain"}}}}
}

// artifactEvent is the stream event of a completed execution's result.
func (s *server) artifactEvent(e crtx.Execution, result, contextID string) *a2a.TaskArtifactUpdateEvent {
	return &a2a.TaskArtifactUpdateEvent{TaskID: a2a.TaskID(e.ID), ContextID: contextOf(e, contextID),
		Artifact: s.artifact(e, result), LastChunk: true}
}
