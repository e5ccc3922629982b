package localappwrite

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
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

// columnLength is utopia-php/database Database::LENGTH_KEY: the size of the url, httpUser and httpPass columns.
const columnLength = 255

const (
	eventsDescription = "Value must a valid array no longer than 100 items and Event is not valid."
	urlDescription    = "Value must be a valid URL with following schemes (http, https)"
	secretDescription = "Value must be a valid string and at least 8 chars and no longer than 256 chars"
)

// webhookModel renders Response/Model/Webhook.php; legacy (format < 1.9.1) applies response filter V22's
// renames (tls→security, authUsername→httpUser, authPassword→httpPass, secret→signatureKey). The secret is
// only returned on creation and rotation.
func webhookModel(wh *webhook, legacy, withSecret bool) obj {
	names := [4]string{"tls", "authUsername", "authPassword", "secret"}
	if legacy {
		names = [4]string{"security", "httpUser", "httpPass", "signatureKey"}
	}
	o := obj{
		{"$id", wh.id},
		{"$createdAt", formatTime(wh.created)},
		{"$updatedAt", formatTime(wh.updated)},
		{"name", wh.name},
		{"url", wh.url},
		{"events", nonNil(wh.events)},
		{names[0], wh.tls},
		{names[1], wh.authUsername},
		{names[2], wh.authPassword},
	}
	if withSecret {
		o = append(o, kv{names[3], wh.secret})
	}
	return append(o, kv{"enabled", wh.enabled}, kv{"logs", wh.logs}, kv{"attempts", wh.attempts})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// alias copies request filter V22: the old param names are accepted when the new one is absent.
func (c *call) alias(newName, oldName string) {
	if !c.has(newName) && c.has(oldName) {
		c.params[newName] = c.params[oldName]
	}
}

func (c *call) webhookAliases() {
	c.alias("tls", "security")
	c.alias("authUsername", "httpUser")
	c.alias("authPassword", "httpPass")
	c.alias("secret", "signatureKey")
}

// validURL copies utopia's URL validator with schemes http and https (FILTER_VALIDATE_URL + scheme check).
// Appwrite also applies PublicDomain; the stand-in does not, so tests can deliver to loopback servers.
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

// webhookFields reads the params shared by create and update, in Appwrite's declaration order.
func (c *call) webhookFields(wh *webhook) *APIError {
	var err *APIError
	if wh.url, err = c.str("url", true, "", 0); err != nil {
		return err
	}
	if !validURL(wh.url) {
		return invalidParam("url", urlDescription)
	}
	if wh.name, err = c.str("name", true, "", 128); err != nil {
		return err
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

// checkStored applies the 255-character columns: url and httpUser as given, httpPass after Appwrite's encrypt
// filter. A value that does not fit is a database structure error: 500 before appwrite#14293, 400 after.
func (s *Server) checkStored(wh *webhook) *APIError {
	field := ""
	switch {
	case len(wh.url) > columnLength:
		field = "url"
	case len(wh.authUsername) > columnLength:
		field = "authUsername"
	case encryptedLength(wh.authPassword) > columnLength:
		field = "authPassword"
	}
	if field == "" {
		return nil
	}
	if s.opts.TooLong == TooLong500 {
		return newErr(ErrGeneralUnknown)
	}
	return invalidParam(field, "Value is too long to be stored: at most 255 characters after encryption")
}

// encryptedLength is the stored length of an encrypted value: Appwrite's encrypt filter stores
// json_encode({"data":<base64 AES-128-GCM>,"method":"aes-128-gcm","iv":<24 hex>,"tag":<32 hex>,"version":"1"}),
// where json_encode escapes each "/" of the base64 as "\/": 121 + 4*ceil(n/3) + slashes. The ciphertext is
// computed for real (random key and IV), so the number of slashes varies like Appwrite's.
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
		items = append(items, webhookModel(c.pr.webhooks[id], c.legacy, false))
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
	c.webhookAliases()
	id, err := c.customID("webhookId")
	if err != nil {
		return 0, nil, err
	}
	wh := &webhook{id: id}
	if err := c.webhookFields(wh); err != nil {
		return 0, nil, err
	}
	if c.has("secret") {
		if wh.secret, err = c.str("secret", false, "", 0); err != nil {
			return 0, nil, err
		}
		if n := len([]rune(wh.secret)); n < 8 || n > 256 {
			return 0, nil, invalidParam("secret", secretDescription)
		}
	} else {
		wh.secret = generatedSecret()
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
	return http.StatusCreated, webhookModel(wh, c.legacy, true), nil
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
	return http.StatusOK, webhookModel(wh, c.legacy, false), nil
}

func (s *Server) updateWebhook(c *call) (int, any, *APIError) {
	c.webhookAliases()
	wh, err := s.findWebhook(c)
	if err != nil {
		return 0, nil, err
	}
	next := *wh
	if err := c.webhookFields(&next); err != nil {
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
	return http.StatusOK, webhookModel(wh, c.legacy, false), nil
}

func (s *Server) rotateWebhookSecret(c *call) (int, any, *APIError) {
	c.webhookAliases()
	wh, err := s.findWebhook(c)
	if err != nil {
		return 0, nil, err
	}
	secret := generatedSecret()
	if c.has("secret") {
		if secret, err = c.str("secret", false, "", 0); err != nil {
			return 0, nil, err
		}
		if n := len([]rune(secret)); n < 8 || n > 256 {
			return 0, nil, invalidParam("secret", secretDescription)
		}
	}
	wh.secret = secret
	wh.updated = s.now()
	return http.StatusOK, webhookModel(wh, c.legacy, true), nil
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
