package automations

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"appwrite-agent/functions/chat/store"
	"appwrite-agent/shared/awclient"
	"appwrite-agent/shared/eventsclient"
	"appwrite-agent/shared/ident"
)

// View is an automation as the page sees it (docs/chat.md "Automations"): never its secret.
type View struct {
	ID             string                `json:"id"`
	ConversationID string                `json:"conversation_id"`
	ConnectionID   string                `json:"connection_id"`
	Event          string                `json:"event"`
	Arguments      map[string]string     `json:"arguments"`
	Instruction    string                `json:"instruction"`
	Status         string                `json:"status"`
	PauseReason    string                `json:"pause_reason"`
	RefreshBefore  string                `json:"refresh_before"`
	RefreshedAt    string                `json:"refreshed_at"`
	RefreshError   string                `json:"refresh_error"`
	Usage          store.AutomationUsage `json:"usage"`
	CreatedAt      string                `json:"created_at"`
}

func viewOf(a store.Automation, u store.AutomationUsage) View {
	return View{ID: a.ID, ConversationID: a.ConversationID, ConnectionID: a.ConnectionID, Event: a.Event, Arguments: a.Arguments,
		Instruction: a.Instruction, Status: a.Status, PauseReason: a.PauseReason, RefreshBefore: a.RefreshBefore,
		RefreshedAt: a.RefreshedAt, RefreshError: a.RefreshError, Usage: u, CreatedAt: a.CreatedAt}
}

// ValidationError is input the page should not have sent: the message names the field.
type ValidationError struct{ Message string }

func (e *ValidationError) Error() string { return e.Message }

func invalid(format string, args ...any) error {
	return &ValidationError{Message: fmt.Sprintf(format, args...)}
}

// Input is a new automation as the page sends it.
type Input struct {
	ConnectionID string            `json:"connection_id"`
	Event        string            `json:"event"`
	Arguments    map[string]string `json:"arguments"`
	Instruction  string            `json:"instruction"`
}

// MaxArguments bounds an automation's arguments (the catalog's events take at most four).
const MaxArguments = 8

// argName is what an argument's name must match (snake case), compiled on first use.
var argName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`) })

// check validates in and refuses chat's own tables and functions.
func (s *Service) check(in *Input) error {
	in.ConnectionID, in.Event, in.Instruction = strings.TrimSpace(in.ConnectionID), strings.TrimSpace(in.Event), strings.TrimSpace(in.Instruction)
	switch {
	case in.ConnectionID == "":
		return invalid("connection_id is required: the MCP connection of the events server")
	case in.Event == "" || len(in.Event) > 128:
		return invalid("event is required: an event name of events/list (at most 128 characters)")
	case in.Instruction == "":
		return invalid("instruction is required: what the agent does when the event happens")
	case utf8.RuneCountInString(in.Instruction) > store.InstructionChars:
		return invalid("instruction exceeds %d characters", store.InstructionChars)
	case len(in.Arguments) > MaxArguments:
		return invalid("arguments: at most %d", MaxArguments)
	}
	for k, v := range in.Arguments {
		if !argName().MatchString(k) {
			return invalid("arguments: '%s' is not an argument name", k)
		}
		if !awclient.ValidID(v) { // every argument of the catalog is an Appwrite id
			return invalid("arguments.%s must be an Appwrite id: 1 to 36 characters of a-z, A-Z, 0-9, ., _ and -, starting with a letter or a digit", k)
		}
	}
	return s.checkNotOwn(in.Event, in.Arguments)
}

// checkNotOwn refuses an automation on chat's own tables or functions in chat's project: every turn it
// started would write to them (messages, progress rows, conversations) or run them (turn, chat), and start
// another turn, for ever.
func (s *Service) checkNotOwn(event string, args map[string]string) error {
	own := s.cfg.Own
	if own.ProjectID == "" || args["project_id"] != own.ProjectID {
		return nil
	}
	if db, table := args["database_id"], args["table_id"]; table != "" && slices.Contains(own.Tables[db], table) {
		return invalid("an automation cannot watch chat's own table '%s' (database '%s'): every turn it started would write to that table and start another", table, db)
	}
	if fn := args["function_id"]; fn != "" && slices.Contains(own.Functions, fn) && strings.HasPrefix(event, "functions.") {
		return invalid("an automation cannot watch the function '%s': it runs chat's own turns, so a turn it started could start another", fn)
	}
	return nil
}

// Title is an automation conversation's title: what it watches, in words ("New rows in support_tickets").
func Title(event string, args map[string]string) string {
	what := map[string]string{
		"tablesdb.row.created": "New rows in %s", "tablesdb.row.updated": "Rows updated in %s", "tablesdb.row.deleted": "Rows deleted in %s",
		"storage.file.created": "New files in %s", "functions.execution.failed": "Failed executions of %s",
		"functions.deployment.completed": "Deployments of %s", "sites.deployment.completed": "Deployments of the site %s",
	}[event]
	var on string
	for _, k := range []string{"table_id", "bucket_id", "function_id", "site_id"} {
		if on = args[k]; on != "" {
			break
		}
	}
	switch {
	case event == "users.user.created":
		return "New users"
	case what != "" && on != "":
		return fmt.Sprintf(what, on)
	case on != "":
		return event + " on " + on
	}
	return event
}

// Create makes a new automation of userID: its conversation, its row (the secret sealed), then the
// subscription, which mcp-events verifies with a challenge to the callback (Deliver answers it). When the
// subscription fails, nothing is left.
func (s *Service) Create(ctx context.Context, userID string, in Input) (View, error) {
	if s.cfg.PublicURL == "" {
		return View{}, ErrNotConfigured
	}
	if in.Arguments == nil {
		in.Arguments = map[string]string{}
	}
	if err := s.check(&in); err != nil {
		return View{}, err
	}
	c, err := s.open(ctx, userID, in.ConnectionID)
	if err != nil {
		return View{}, err
	}
	id := ident.Unique()
	conv, err := s.st.CreateAutomationConversation(ctx, userID, Title(in.Event, in.Arguments), id)
	if err != nil {
		return View{}, fmt.Errorf("creating the automation's conversation: %w", err)
	}
	secret := newSecret()
	a, err := s.st.CreateAutomation(ctx, store.Automation{ID: id, UserID: userID, ConversationID: conv.ID, ConnectionID: in.ConnectionID,
		Event: in.Event, Arguments: in.Arguments, Instruction: in.Instruction, Status: store.AutomationActive}, secret)
	if err != nil {
		_ = s.st.DeleteConversation(ctx, userID, conv.ID)
		return View{}, fmt.Errorf("storing the automation: %w", err)
	}
	sub, err := s.subscribe(ctx, c, a, secret)
	if err != nil {
		if derr := s.st.DeleteAutomation(ctx, userID, a.ID); derr != nil {
			s.log("automations: removing automation " + a.ID + " whose subscription failed: " + derr.Error())
		}
		if derr := s.st.DeleteConversation(ctx, userID, conv.ID); derr != nil {
			s.log("automations: removing the conversation of automation " + a.ID + ": " + derr.Error())
		}
		return View{}, err
	}
	a, err = s.subscribed(ctx, a, sub, store.AutomationUpdate{})
	if err != nil {
		return View{}, err
	}
	notice := fmt.Sprintf("Automation created. When %s happens (%s), the agent will: %s", a.Event, describeArgs(a.Arguments), a.Instruction)
	if err := s.st.AddNotice(ctx, userID, conv.ID, store.NoticeID(a.ID, "created"), notice); err != nil {
		s.log("automations: the created notice of " + a.ID + ": " + err.Error())
	}
	return viewOf(a, store.AutomationUsage{}), nil
}

func describeArgs(args map[string]string) string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+" "+args[k])
	}
	return strings.Join(parts, ", ")
}

// subscribe calls events/subscribe for a with c: the same call makes and refreshes the subscription.
func (s *Service) subscribe(ctx context.Context, c *conn, a store.Automation, secret string) (eventsclient.Subscription, error) {
	var sub eventsclient.Subscription
	err := c.call(ctx, func(cl *eventsclient.Client) error {
		var err error
		sub, err = cl.Subscribe(ctx, a.Event, a.Arguments, s.CallbackURL(a.ID), secret, s.cfg.TTL.Milliseconds())
		return err
	})
	if err == nil && sub.ID == "" {
		err = errors.New("the MCP server answered events/subscribe without a subscription id")
	}
	return sub, err
}

// subscribed records a successful (re)subscription, with the columns extra sets.
func (s *Service) subscribed(ctx context.Context, a store.Automation, sub eventsclient.Subscription, extra store.AutomationUpdate) (store.Automation, error) {
	now, yes, none := s.now(), true, ""
	extra.SubscriptionID, extra.Subscribed, extra.RefreshedAt, extra.RefreshError = &sub.ID, &yes, &now, &none
	if sub.RefreshBefore != nil {
		if t, err := time.Parse(time.RFC3339, *sub.RefreshBefore); err == nil {
			extra.RefreshBefore = &t
		}
	}
	return s.st.UpdateAutomation(ctx, a.ID, extra)
}

// unsubscribe calls events/unsubscribe for a.
func (s *Service) unsubscribe(ctx context.Context, a store.Automation) error {
	c, err := s.open(ctx, a.UserID, a.ConnectionID)
	if err != nil {
		return err
	}
	return c.call(ctx, func(cl *eventsclient.Client) error {
		return cl.Unsubscribe(ctx, a.Event, a.Arguments, s.CallbackURL(a.ID))
	})
}

// List is the user's automations with what each has cost.
func (s *Service) List(ctx context.Context, userID string) ([]View, error) {
	list, err := s.st.Automations(ctx, userID)
	if err != nil {
		return nil, err
	}
	usage, err := s.st.Usage(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(list))
	for _, a := range list {
		out = append(out, viewOf(a, usage[a.ID]))
	}
	return out, nil
}

// Get is one of the user's automations.
func (s *Service) Get(ctx context.Context, userID, id string) (View, error) {
	a, err := s.st.Automation(ctx, userID, id)
	if err != nil {
		return View{}, err
	}
	usage, err := s.st.Usage(ctx, userID)
	if err != nil {
		return View{}, err
	}
	return viewOf(a, usage[a.ID]), nil
}

// Pause stops an automation: no delivery starts a turn from now on, and its subscription is removed (when
// that fails, the scheduled run tries again; a delivery meanwhile starts nothing).
func (s *Service) Pause(ctx context.Context, userID, id string) (View, error) {
	a, err := s.st.Automation(ctx, userID, id)
	if err != nil {
		return View{}, err
	}
	paused, by := store.AutomationPaused, store.PausedByUser
	if a, err = s.st.UpdateAutomation(ctx, a.ID, store.AutomationUpdate{Status: &paused, PauseReason: &by}); err != nil {
		return View{}, err
	}
	if a.Subscribed {
		a = s.dropSubscription(ctx, a)
	}
	return s.Get(ctx, userID, a.ID)
}

// dropSubscription unsubscribes a and records it; a failure is recorded as the automation's refresh error.
func (s *Service) dropSubscription(ctx context.Context, a store.Automation) store.Automation {
	err := s.unsubscribe(ctx, a)
	u := store.AutomationUpdate{}
	if err != nil {
		why := "removing the subscription failed (the next scheduled run tries again): " + err.Error()
		u.RefreshError = &why
	} else {
		no, none := false, ""
		u.Subscribed, u.RefreshError = &no, &none
	}
	if na, uerr := s.st.UpdateAutomation(ctx, a.ID, u); uerr == nil {
		return na
	}
	return a
}

// Resume subscribes a paused automation again and starts it with a fresh rate-limit budget (a new
// generation: the runs of the hour that paused it no longer count).
func (s *Service) Resume(ctx context.Context, userID, id string) (View, error) {
	a, err := s.st.Automation(ctx, userID, id)
	if err != nil {
		return View{}, err
	}
	if err := s.resubscribe(ctx, a, true); err != nil {
		return View{}, err
	}
	return s.Get(ctx, userID, a.ID)
}

// resubscribe subscribes a again (activate: and makes it active with a new generation); a failure is
// recorded on the automation and returned.
func (s *Service) resubscribe(ctx context.Context, a store.Automation, activate bool) error {
	secret, err := s.st.AutomationSecret(a)
	if err != nil {
		return err
	}
	c, err := s.open(ctx, a.UserID, a.ConnectionID)
	var sub eventsclient.Subscription
	if err == nil {
		sub, err = s.subscribe(ctx, c, a, secret)
	}
	if err != nil {
		why := err.Error()
		if _, uerr := s.st.UpdateAutomation(ctx, a.ID, store.AutomationUpdate{RefreshError: &why}); uerr != nil {
			s.log("automations: recording the failed refresh of " + a.ID + ": " + uerr.Error())
		}
		return err
	}
	u := store.AutomationUpdate{}
	if activate {
		active, none, gen := store.AutomationActive, "", a.Generation+1
		u.Status, u.PauseReason, u.Generation = &active, &none, &gen
	}
	_, err = s.subscribed(ctx, a, sub, u)
	return err
}

// Reconnected subscribes again the user's automations on connectionID whose last refresh failed: the user
// has just connected it again (a new OAuth grant). It returns the automations as they are now.
func (s *Service) Reconnected(ctx context.Context, userID, connectionID string) ([]View, error) {
	list, err := s.st.Automations(ctx, userID)
	if err != nil {
		return nil, err
	}
	for _, a := range list {
		if a.ConnectionID != connectionID || a.Status != store.AutomationActive || (a.RefreshError == "" && a.Subscribed) {
			continue
		}
		if err := s.resubscribe(ctx, a, false); err != nil {
			s.log("automations: resubscribing " + a.ID + " after its connection was reconnected: " + err.Error())
		}
	}
	return s.List(ctx, userID)
}

// DeleteResult says whether the subscription was removed with the automation.
type DeleteResult struct {
	Deleted      bool   `json:"deleted"`
	Unsubscribed bool   `json:"unsubscribed"`
	Reason       string `json:"reason,omitempty"`
}

// Delete removes an automation: its subscription (the webhook in the user's project), its row and its runs.
// Its conversation stays, as an ordinary one. When the subscription cannot be removed (the connection is
// gone), the automation is deleted all the same: deliveries then get 410 Gone, and the webhook lapses at its
// expiry; the answer says so.
func (s *Service) Delete(ctx context.Context, userID, id string) (DeleteResult, error) {
	a, err := s.st.Automation(ctx, userID, id)
	if err != nil {
		return DeleteResult{}, err
	}
	res := DeleteResult{Deleted: true, Unsubscribed: true}
	if a.Subscribed {
		if err := s.unsubscribe(ctx, a); err != nil {
			res.Unsubscribed, res.Reason = false, "the subscription could not be removed ("+err.Error()+"); it lapses at its expiry, and its deliveries meanwhile start nothing"
		}
	}
	if err := s.st.DeleteAutomation(ctx, userID, id); err != nil {
		return DeleteResult{}, err
	}
	return res, nil
}

// Events is events/list of the user's connection: the events its token may use.
func (s *Service) Events(ctx context.Context, userID, connectionID string) ([]eventsclient.Event, error) {
	c, err := s.open(ctx, userID, connectionID)
	if err != nil {
		return nil, err
	}
	var evs []eventsclient.Event
	err = c.call(ctx, func(cl *eventsclient.Client) error {
		var err error
		evs, err = cl.List(ctx)
		return err
	})
	return evs, err
}
