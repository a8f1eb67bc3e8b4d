// Package mapping decides, for each recording a source found (a connectors.Recording), who owns
// it (X-Author), how downstream systems find it again (X-External-Id) and what it carries
// (X-Metadata), and checks both headers against the reference's rules before any byte is sent.
// It knows nothing of the bridge's jobs: the bridge asks with an Input and acts on the Decision.
package mapping

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/connectors"
)

// Reserved metadata keys, set on every upload; templates cannot override them.
const (
	KeyJob      = "bridge_job"
	KeyInstance = "bridge_instance"
)

// Rules are a source's mapping settings.
type Rules struct {
	// Author is a static X-Author (email:<e-mail> or user:<uuid>); empty leaves the upload to
	// the key's creator.
	Author string
	// ExternalID is a text/template for X-External-Id; empty uses "<type>:<source>:<item>@<version>"
	// (the item replaced by its hash when that would exceed 128 characters).
	ExternalID string
	// Metadata maps X-Metadata keys to text/templates.
	Metadata map[string]string
	// Provider is the identity provider of the source's users (default: the owner's, e.g. zoom).
	Provider string
	// Resolve lists the owner rules tried in order (identity, email) when Author is empty.
	Resolve []string
	// Otherwise is what happens when no rule matches: hold (default with rules), key_owner or
	// skip.
	Otherwise string
	// Map is a static table, external user (id or e-mail) → member (email:… or user:…); MapFile
	// is the same as CSV (two columns, a header line optional), its entries over Map's. A running
	// bridge reads the file again when it changes (Mapper.Reload).
	Map     map[string]string
	MapFile string
	// Members is the cached member list the owner rules need.
	Members *Members
}

// Mapper applies one source's rules.
type Mapper struct {
	source, typ, instance string
	author                string
	provider, otherwise   string
	rules                 []string
	members               *Members
	// table is the map rule's entries, external user (id, or lower-cased e-mail) → author:
	// static (mapping.map) under those of mapFile, swapped whole when Reload reads the file again.
	table      atomic.Pointer[map[string]string]
	static     map[string]string
	mapFile    string
	file       sync.Mutex // guards fileSum and fileErr
	fileSum    [sha256.Size]byte
	fileErr    string // the last error Reload reported, not reported again
	externalID *template.Template
	metadata   map[string]*template.Template
}

// New compiles a source's rules; a bad author form, template or reserved key is an error naming
// the setting.
func New(source, typ, instance string, r Rules) (*Mapper, error) {
	m := &Mapper{source: source, typ: typ, instance: instance, author: r.Author, metadata: map[string]*template.Template{},
		provider: strings.ToLower(r.Provider), rules: r.Resolve, otherwise: r.Otherwise, members: r.Members,
		static: map[string]string{}, mapFile: r.MapFile}
	if len(r.Resolve) > 0 && m.otherwise == "" {
		m.otherwise = OtherwiseHold
	}
	switch m.otherwise {
	case "", OtherwiseHold, OtherwiseKeyOwner, OtherwiseSkip:
	default:
		return nil, fmt.Errorf("mapping.otherwise: %q is not hold, key_owner or skip", r.Otherwise)
	}
	for _, rule := range r.Resolve {
		switch rule {
		case RuleIdentity, RuleEmail, RuleMap, RuleStatic:
		default:
			return nil, fmt.Errorf("mapping.rules: %q is not identity, email, map or static", rule)
		}
		if rule == RuleStatic && r.Author == "" {
			return nil, fmt.Errorf("mapping.rules: static needs author")
		}
	}
	if m.provider != "" {
		if err := api.ValidateIdentity(api.Identity{Provider: m.provider, ExternalID: "x"}); err != nil {
			return nil, fmt.Errorf("mapping.provider %q: %w", r.Provider, err)
		}
	}
	if r.Author != "" {
		if err := api.ValidateAuthor(r.Author, true); err != nil {
			return nil, fmt.Errorf("author %q: %w", r.Author, err)
		}
	}
	for k, v := range r.Map {
		if err := addMapping(m.static, k, v); err != nil {
			return nil, fmt.Errorf("mapping.map %q: %w", k, err)
		}
	}
	table := maps.Clone(m.static)
	if r.MapFile != "" {
		data, err := os.ReadFile(r.MapFile)
		if err == nil {
			err = parseMapFile(r.MapFile, data, table)
		}
		if err != nil {
			return nil, fmt.Errorf("mapping.map_file: %w", err)
		}
		m.fileSum = sha256.Sum256(data)
	}
	m.table.Store(&table)
	if slices.Contains(r.Resolve, RuleMap) && len(table) == 0 {
		return nil, fmt.Errorf("mapping.rules: map needs map_file or map entries")
	}
	if r.ExternalID != "" {
		t, err := template.New("external_id").Option("missingkey=error").Parse(r.ExternalID)
		if err != nil {
			return nil, fmt.Errorf("external_id: %w", err)
		}
		m.externalID = t
	}
	for k, v := range r.Metadata {
		if k == KeyJob || k == KeyInstance {
			return nil, fmt.Errorf("metadata.%s: reserved for the bridge", k)
		}
		t, err := template.New(k).Option("missingkey=error").Parse(v)
		if err != nil {
			return nil, fmt.Errorf("metadata.%s: %w", k, err)
		}
		m.metadata[k] = t
	}
	if err := m.checkTemplates(); err != nil {
		return nil, err
	}
	return m, nil
}

// ErrNotReady is wrapped by a Map error that passes (the member list could not be read): the
// recording waits for the next try instead of being skipped.
var ErrNotReady = errors.New("not ready yet")

// ErrUnmapped is wrapped by a Map error that holds the recording (no member for its owner, and
// otherwise is hold): it waits, with the reason, and is mapped again until a rule matches.
var ErrUnmapped = errors.New("unmapped")

// Input is what a mapping is asked about: the recording a source found, and what the bridge
// adds to it.
type Input struct {
	connectors.Recording
	// JobID is the id of the recording's job: templates see it as .JobID, and it is sent as
	// metadata bridge_job.
	JobID string
	// Author is an X-Author already decided by hand (bridge jobs release); when set it is kept
	// and the owner rules are not applied.
	Author string
}

// Decision is what a recording is uploaded with: its owner (X-Author, empty for the key's
// creator), X-External-Id and X-Metadata, each checked against the reference's rules.
type Decision struct {
	Author     string
	ExternalID string
	Metadata   json.RawMessage
}

// templateData is what templates see.
type templateData struct {
	connectors.Recording
	Type  string
	JobID string
}

// Map decides the upload headers of in. Its error is the reason the recording is skipped (a
// template that fails or a value breaking the reference's rules, never silently trimmed),
// unless it wraps ErrNotReady (try again later) or ErrUnmapped (hold).
func (m *Mapper) Map(ctx context.Context, in Input) (Decision, error) {
	data := templateData{Recording: in.Recording, Type: m.typ, JobID: in.JobID}
	res := Decision{Author: m.author}
	switch {
	case in.Author != "": // set by hand (bridge jobs release), kept
		res.Author = in.Author
	case len(m.rules) > 0:
		author, ok, err := m.resolveOwner(ctx, in.Owner)
		if err != nil {
			return res, err
		}
		switch {
		case ok:
			res.Author = author
		case m.otherwise == OtherwiseSkip:
			return res, fmt.Errorf("no member matches the owner %s (rules %v)", describe(in.Owner), m.rules)
		case m.otherwise == OtherwiseHold:
			return res, fmt.Errorf("%w: no member matches the owner %s (rules %v)", ErrUnmapped, describe(in.Owner), m.rules)
		default:
			res.Author = "" // key_owner: the key's creator
		}
	}
	if m.externalID != nil {
		var b bytes.Buffer
		if err := m.externalID.Execute(&b, data); err != nil {
			return res, fmt.Errorf("external_id template: %w", err)
		}
		res.ExternalID = b.String()
	} else if in.SourceExternalID != "" && api.ValidateExternalID(in.SourceExternalID) == nil {
		res.ExternalID = in.SourceExternalID // the source's own (too long ones fall back below)
	} else {
		res.ExternalID = DefaultExternalID(m.typ, m.source, in.ItemID, in.Version)
	}
	if err := api.ValidateExternalID(res.ExternalID); err != nil {
		return res, fmt.Errorf("external id %q: %w", res.ExternalID, err)
	}
	meta := map[string]any{}
	for k, v := range in.Recording.Metadata {
		meta[k] = v
	}
	meta[KeyJob], meta[KeyInstance] = in.JobID, m.instance
	keys := make([]string, 0, len(m.metadata))
	for k := range m.metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var b bytes.Buffer
		if err := m.metadata[k].Execute(&b, data); err != nil {
			return res, fmt.Errorf("metadata.%s template: %w", k, err)
		}
		meta[k] = b.String()
	}
	raw, err := api.EncodeMetadata(meta)
	if err != nil {
		return res, fmt.Errorf("metadata: %w", err)
	}
	res.Metadata = json.RawMessage(raw)
	return res, nil
}

func describe(o *connectors.Owner) string {
	if o == nil {
		return "(none given by the source)"
	}
	return fmt.Sprintf("%s:%s <%s>", o.Provider, o.ID, o.Email)
}

// DefaultExternalID is "<type>:<source>:<item>@<version>", stable and unique per source item
// and version; an item too long for 128 characters is replaced by the first 32 hex digits of
// its SHA-256.
func DefaultExternalID(typ, source, item, version string) string {
	id := fmt.Sprintf("%s:%s:%s@%s", typ, source, item, version)
	if len(id) <= api.MaxExternalIDLen && printable(id) {
		return id
	}
	sum := sha256.Sum256([]byte(item))
	return fmt.Sprintf("%s:%s:sha256-%s@%s", typ, source, hex.EncodeToString(sum[:16]), version)
}

func printable(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r > '~' })
}
