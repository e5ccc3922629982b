package localappwrite

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"
)

// webhook is a project webhook (collection "webhooks" of app/config/collections/platform.php).
type webhook struct {
	id           string
	name         string
	url          string
	events       []string
	enabled      bool
	tls          bool   // stored as "security"
	authUsername string // stored as "httpUser"
	authPassword string // stored as "httpPass", encrypted
	secret       string // stored as "signatureKey"
	logs         string
	attempts     int
	created      time.Time
	updated      time.Time
}

// columnLength is utopia-php/database Database::LENGTH_KEY: the size of the url, name, httpUser and httpPass
// columns and of each events entry (app/config/collections/platform.php, collection "webhooks").
const columnLength = 255

const (
	eventsDescription = "Value must a valid array no longer than 100 items and Event is not valid."
	// urlDescription is utopia-php/validators Multiple::getDescription over URL(['http','https']) and
	// PublicDomain (Webhooks/Create.php:66, Update.php:64; validators 0.2.6 Multiple.php, URL.php; domains
	// PublicDomain.php): every rule's description, numbered, each followed by " \n".
	urlDescription    = "1. Value must be a valid URL with following schemes (http, https) \n2. Value must be a public domain \n"
	secretDescription = "Value must be a valid string and at least 8 chars and no longer than 256 chars"
)

// webhookModel renders Response/Model/Webhook.php; legacy (format < 1.9.1) applies response filter V22's
// renames (tls→security, authUsername→httpUser, authPassword→httpPass, secret→signatureKey). The secret is
// only filled on creation and rotation: get, list and update remove signatureKey before rendering, so the
// model's default "" is sent (Get.php:75, XList.php:124, Update.php:122; Model/Webhook.php:73-78).
//
// APPWRITE CLOUD BEHAVIOUR (ProfileCloud): authPassword is write-only, never returned by any route, create
// and update included (appwrite/mcp docs/events.md "The managed webhook": "Appwrite never returns
// authPassword"; webhooks.py: "Appwrite stores authPassword write-only"). The open-source model returns it
// decrypted (Model/Webhook.php:107). authUsername is returned as given: no source says Cloud hides it, and
// mcp-events does not depend on it.
func (s *Server) webhookModel(wh *webhook, legacy, withSecret bool) obj {
	names := [4]string{"tls", "authUsername", "authPassword", "secret"}
	if legacy {
		names = [4]string{"security", "httpUser", "httpPass", "signatureKey"}
	}
	secret := ""
	if withSecret {
		secret = wh.secret
	}
	password := wh.authPassword
	if s.cloud() {
		password = ""
	}
	return obj{
		{"$id", wh.id},
		{"$createdAt", formatTime(wh.created)},
		{"$updatedAt", formatTime(wh.updated)},
		{"name", wh.name},
		{"url", wh.url},
		{"events", nonNil(wh.events)},
		{names[0], wh.tls},
		{names[1], wh.authUsername},
		{names[2], password},
		{names[3], secret},
		{"enabled", wh.enabled},
		{"logs", wh.logs},
		{"attempts", wh.attempts},
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// webhookRequestFilter copies request filter V22 (Request/Filters/V22.php:53-71), which Appwrite applies only
// when X-Appwrite-Response-Format is below 1.9.1 (app/controllers/general.php:891-893): security, httpUser
// and httpPass replace tls, authUsername and authPassword when set, and are removed. Nothing maps
// signatureKey: like every param a route does not declare, it is dropped and has no effect (utopia-php/http
// Http.php getArguments reads declared params only).
//
// As Appwrite 1.9.0 (Options.Version below 1.9.5), the routes declare security, httpUser and httpPass
// themselves and no tls, authUsername, authPassword or secret (1.9.0 Webhooks/Create.php:64-71): those are
// dropped, and the response always has the old names.
func (c *call) webhookRequestFilter() {
	if c.s.webhooks190() {
		c.legacy = true
		for _, n := range []string{"tls", "authUsername", "authPassword", "secret"} {
			delete(c.params, n)
		}
	} else if !c.legacy {
		return
	}
	for oldName, newName := range map[string]string{"security": "tls", "httpUser": "authUsername", "httpPass": "authPassword"} {
		if v, ok := c.params[oldName]; ok && v != nil {
			c.params[newName] = v
		}
		delete(c.params, oldName)
	}
}

// validURL copies utopia's URL validator with schemes http and https (FILTER_VALIDATE_URL + scheme check).
func validURL(s string) bool {
	if strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return false
	}
	return true
}

// publicDomain copies utopia-php/domains PublicDomain::isValid: the URL's host must be a known domain, that is
// its public suffix is on the Public Suffix List (Domain::isKnown). IP literals (public ones too), localhost
// and names under unlisted suffixes (.local, .internal, .test, .lan) fail. Appwrite adds only the hosts
// request-catcher-sms and request-catcher-webhook to the allow-list, and only outside production
// (app/init/registers.php:40-45); the stand-in allows nothing unless Options.AllowLoopbackWebhookURLs.
func (s *Server) publicDomain(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if s.opts.AllowLoopbackWebhookURLs && isLoopbackHost(host) {
		return true
	}
	if host == "" || net.ParseIP(host) != nil || strings.HasSuffix(host, ".") {
		return false
	}
	suffix, icann := publicsuffix.PublicSuffix(host)
	// An unlisted suffix falls back to the "*" rule: the last label, not ICANN, without a dot.
	return icann || strings.Contains(suffix, ".")
}

// isLoopbackHost is the stand-in-only allowance: localhost, *.localhost and loopback IP literals.
func isLoopbackHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// webhookFields reads the params shared by create and update, in Appwrite's declaration order (create: url
// then name; update: name then url).
func (s *Server) webhookFields(c *call, wh *webhook, create bool) *APIError {
	readURL := func() *APIError {
		v, err := c.str("url", true, "", 0)
		if err != nil {
			return err
		}
		if !validURL(v) || !s.publicDomain(v) {
			return invalidParam("url", urlDescription)
		}
		wh.url = v
		return nil
	}
	readName := func() *APIError {
		v, err := c.str("name", true, "", 128)
		wh.name = v
		return err
	}
	order := []func() *APIError{readURL, readName}
	if !create {
		order = []func() *APIError{readName, readURL}
	}
	for _, read := range order {
		if err := read(); err != nil {
			return err
		}
	}
	events, _, err := c.strArray("events", true, 100, eventsDescription)
	if err != nil {
		return err
	}
	for _, e := range events {
		if !validEvent(e) {
			return invalidParam("events", eventsDescription)
		}
	}
	wh.events = events
	if wh.enabled, err = c.boolean("enabled", true); err != nil {
		return err
	}
	if wh.tls, err = c.boolean("tls", false); err != nil {
		return err
	}
	if wh.authUsername, err = c.str("authUsername", false, "", 256); err != nil {
		return err
	}
	if wh.authPassword, err = c.str("authPassword", false, "", 256); err != nil {
		return err
	}
	return nil
}

// webhooks190 reports whether the stand-in plays an Appwrite older than 1.9.5 (Options.Version), whose webhook
// API is 1.9.0's: the key is always generated (1.9.0 Webhooks/Create.php:111) and rotated by PATCH
// .../signature without params. No release exists between 1.9.0 and 1.9.5-rc.1.
func (s *Server) webhooks190() bool {
	v, ok := parseVersion(s.opts.Version)
	return ok && versionLess(v, [3]int{1, 9, 5})
}

// secretParam reads the optional secret: Nullable(Text(256, 8)) (Create.php:73, Secret/Update.php:57); absent
// or null generates 128 hex characters (bin2hex(random_bytes(64)), Create.php:114, Secret/Update.php:85).
func (c *call) secretParam() (string, *APIError) {
	if !c.has("secret") {
		return generatedSecret(), nil
	}
	v, err := c.str("secret", false, "", 0)
	if err != nil {
		return "", invalidParam("secret", secretDescription)
	}
	if n := len([]rune(v)); n < 8 || n > 256 {
		return "", invalidParam("secret", secretDescription)
	}
	return v, nil
}

// checkStored applies the 255-character columns. utopia-php/database encodes (the encrypt filter on httpPass)
// before it validates the structure (Database.php:5752 then :5771), and Appwrite's error handler maps no
// StructureException, so a value that does not fit is a 500 general_unknown "Server Error"
// (app/controllers/general.php:1440,1460-1463; appwrite#14293, unfixed at HEAD 0cefd06). No Appwrite version
// answers 400 here.
func (s *Server) checkStored(wh *webhook) *APIError {
	tooLong := func(v string) bool { return len([]rune(v)) > columnLength }
	bad := tooLong(wh.url) || tooLong(wh.name) || tooLong(wh.authUsername) || encryptedLength(wh.authPassword) > columnLength
	for _, e := range wh.events {
		bad = bad || tooLong(e)
	}
	if !bad {
		return nil
	}
	s.opts.Logf("localappwrite: webhook %s: a value does not fit its 255-character column (StructureException): answering 500", wh.id)
	return newErr(ErrGeneralUnknown)
}

// encryptedLength is the stored length of an encrypted value: Appwrite's encrypt filter stores
// json_encode({"data":<base64 AES-128-GCM>,"method":"aes-128-gcm","iv":<24 hex>,"tag":<32 hex>,"version":"1"}),
// where json_encode escapes each "/" of the base64 as "\/": 121 + 4*ceil(n/3) + slashes. The ciphertext is
// computed for real (random key and IV), so the number of slashes varies like Appwrite's
// (app/init/database/filters.php:278-291, 1.9.6; an empty value is encrypted too).
func encryptedLength(plain string) int {
	block, err := aes.NewCipher(randomBytes(16))
	if err != nil {
		return 0
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return 0
	}
	sealed := gcm.Seal(nil, randomBytes(gcm.NonceSize()), []byte(plain), nil)
	data := base64.StdEncoding.EncodeToString(sealed[:len(plain)]) // the tag is stored apart
	return 121 + len(data) + strings.Count(data, "/")
}

func generatedSecret() string { return hex.EncodeToString(randomBytes(64)) }

func (s *Server) listWebhooks(c *call) (int, any, *APIError) {
	queries, _, err := c.strArray("queries", false, 100, "Invalid queries")
	if err != nil {
		return 0, nil, err
	}
	withTotal, err := c.boolean("total", true)
	if err != nil {
		return 0, nil, err
	}
	items := make([]obj, 0, len(c.pr.webhookOrder))
	for _, id := range c.pr.webhookOrder {
		items = append(items, s.webhookModel(c.pr.webhooks[id], c.legacy, false))
	}
	page, total, err := applyQueries(items, queries)
	if err != nil {
		return 0, nil, err
	}
	if !withTotal {
		total = 0
	}
	return http.StatusOK, obj{{"total", total}, {"webhooks", nonNilObjs(page)}}, nil
}

func nonNilObjs(o []obj) []obj {
	if o == nil {
		return []obj{}
	}
	return o
}

func (s *Server) createWebhook(c *call) (int, any, *APIError) {
	c.webhookRequestFilter()
	id, err := c.customID("webhookId")
	if err != nil {
		return 0, nil, err
	}
	wh := &webhook{id: id}
	if err := s.webhookFields(c, wh, true); err != nil {
		return 0, nil, err
	}
	if wh.secret, err = c.secretParam(); err != nil {
		return 0, nil, err
	}
	// APPWRITE CLOUD BEHAVIOUR: the plan's limit is checked before the duplicate id, so a create with an
	// existing id at the limit is this 403, not 409 (seen on Cloud's database limit: a project at its one
	// database gets additional_resource_not_allowed for an id that exists; appwrite/mcp docs/events.md
	// "Free plan" for webhooks).
	if limit := s.webhookLimit(); limit >= 0 && len(c.pr.webhooks) >= limit {
		return 0, nil, newErr(ErrAdditionalResourceNotAllowed)
	}
	if _, dup := c.pr.webhooks[id]; dup {
		return 0, nil, newErr(ErrWebhookAlreadyExists)
	}
	if err := s.checkStored(wh); err != nil {
		return 0, nil, err
	}
	wh.created = s.now()
	wh.updated = wh.created
	c.pr.webhooks[id] = wh
	c.pr.webhookOrder = append(c.pr.webhookOrder, id)
	return http.StatusCreated, s.webhookModel(wh, c.legacy, true), nil
}

func (s *Server) findWebhook(c *call) (*webhook, *APIError) {
	wh := c.pr.webhooks[c.r.PathValue("webhookId")]
	if wh == nil {
		return nil, newErr(ErrWebhookNotFound)
	}
	return wh, nil
}

func (s *Server) getWebhook(c *call) (int, any, *APIError) {
	wh, err := s.findWebhook(c)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.webhookModel(wh, c.legacy, false), nil
}

func (s *Server) updateWebhook(c *call) (int, any, *APIError) {
	c.webhookRequestFilter()
	wh, err := s.findWebhook(c)
	if err != nil {
		return 0, nil, err
	}
	next := *wh
	if err := s.webhookFields(c, &next, false); err != nil {
		return 0, nil, err
	}
	if err := s.checkStored(&next); err != nil {
		return 0, nil, err
	}
	// An update with enabled=true clears the failure counter (updateWebhook: if ($enabled) attempts = 0).
	if next.enabled {
		next.attempts = 0
	}
	next.events = slices.Clone(next.events)
	next.updated = s.now()
	*wh = next
	return http.StatusOK, s.webhookModel(wh, c.legacy, false), nil
}

// rotateWebhookSecret is PATCH /v1/webhooks/{id}/secret (Secret/Update.php): only secret is declared.
func (s *Server) rotateWebhookSecret(c *call) (int, any, *APIError) {
	c.webhookRequestFilter()
	secret, err := c.secretParam()
	if err != nil {
		return 0, nil, err
	}
	wh, err := s.findWebhook(c)
	if err != nil {
		return 0, nil, err
	}
	wh.secret = secret
	wh.updated = s.now()
	return http.StatusOK, s.webhookModel(wh, c.legacy, true), nil
}

func (s *Server) deleteWebhook(c *call) (int, any, *APIError) {
	wh, err := s.findWebhook(c)
	if err != nil {
		return 0, nil, err
	}
	delete(c.pr.webhooks, wh.id)
	c.pr.webhookOrder = slices.DeleteFunc(c.pr.webhookOrder, func(id string) bool { return id == wh.id })
	return http.StatusNoContent, nil, nil
}

// StoredWebhook is a webhook as the stand-in stores it, authPassword included whatever the profile answers
// on reads: test inspection of what Appwrite keeps (no Appwrite route returns this in the Cloud profile).
type StoredWebhook struct {
	ID, Name, URL              string
	Events                     []string
	Enabled, TLS               bool
	AuthUsername, AuthPassword string
	Attempts                   int
}

// StoredWebhook returns webhook id of project as stored; false when there is none.
func (s *Server) StoredWebhook(projectID, id string) (StoredWebhook, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.projects[projectID]
	if pr == nil || pr.webhooks[id] == nil {
		return StoredWebhook{}, false
	}
	wh := pr.webhooks[id]
	return StoredWebhook{ID: wh.id, Name: wh.name, URL: wh.url, Events: slices.Clone(wh.events), Enabled: wh.enabled, TLS: wh.tls,
		AuthUsername: wh.authUsername, AuthPassword: wh.authPassword, Attempts: wh.attempts}, true
}
