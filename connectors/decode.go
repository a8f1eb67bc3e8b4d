package connectors

// Decoding a source's options (the keys of its entry other than the bridge's own) into its
// connector's Config, once, the way the bridge decodes the rest of its configuration.

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
)

// Decode decodes opts, a source's options, into cfg, a pointer to a connector's Config: each
// option is the exported field tagged koanf:"<option>". Options are decoded onto what cfg
// holds (its defaults): an option not given, or given without a value, keeps it; one given
// replaces it, even with false or 0. A value is read as its field's type, as the bridge's own
// settings are: booleans as true/false, yes/no or 1/0; numbers and durations ("30s") as text
// too; a list as a YAML list or a comma-separated text; a YAML date as text. A value whose type
// has a Validate method (Globs) is checked with it.
//
// It returns an *OptionError for the first unknown option, in sorted order, listing the
// options typ takes (Unknown set); else for the first bad value, saying what was wanted. It
// returns a plain error when cfg is not a pointer to a struct.
func Decode(opts map[string]any, typ string, cfg any) error {
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("connectors: cannot decode options into %T, not a pointer to a struct", cfg)
	}
	fields := OptionFields(v.Elem().Type())
	keys := slices.Sorted(maps.Keys(opts))
	for _, k := range keys {
		if _, ok := fields[k]; !ok {
			names := slices.Sorted(maps.Keys(fields))
			return &OptionError{Key: k, Unknown: true,
				Err: fmt.Errorf("unknown option %q (%s takes %s)", k, typ, strings.Join(names, ", "))}
		}
	}
	for _, k := range keys {
		if opts[k] == nil {
			continue // "key:" with nothing after it: not set
		}
		if err := decodeValue(opts[k], v.Elem().Field(fields[k])); err != nil {
			return &OptionError{Key: k, Err: err}
		}
	}
	return nil
}

// OptionFields maps each option of struct type t, the koanf tag of an exported field, to the
// field's index.
func OptionFields(t reflect.Type) map[string]int {
	out := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("koanf"), ",")
		if f.IsExported() && name != "" && name != "-" {
			out[name] = i
		}
	}
	return out
}

// decodeValue decodes v into a new value of field's type and sets field to it, replacing
// what it held (a default list is not merged with the given one).
func decodeValue(v any, field reflect.Value) error {
	fresh := reflect.New(field.Type())
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		TagName: "koanf", ErrorUnused: true, WeaklyTypedInput: true, Result: fresh.Interface(),
		DecodeHook: mapstructure.ComposeDecodeHookFunc(mapstructure.StringToTimeDurationHookFunc(),
			mapstructure.StringToWeakSliceHookFunc(","), yamlDateToString, strictHook),
	})
	if err == nil {
		err = d.Decode(v)
	}
	if err != nil {
		return valueError(v, field.Type())
	}
	if c, ok := fresh.Elem().Interface().(interface{ Validate() error }); ok {
		if err := c.Validate(); err != nil {
			return err
		}
	}
	field.Set(fresh.Elem())
	return nil
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	errStrict    = errors.New("not taken")
	// boolWords are the texts a boolean option takes, in any case.
	boolWords = map[string]bool{"true": true, "yes": true, "1": true, "false": false, "no": false, "0": false}
)

// strictHook refuses what weakly typed decoding would take wrongly: a number for a duration
// (5 would be 5ns), a fraction for a whole number, true or false for text ("1" or "0"), and
// for a boolean any text but true, yes, 1, false, no or 0.
func strictHook(from, to reflect.Type, v any) (any, error) {
	rv := reflect.ValueOf(v)
	switch {
	case to == durationType && from != durationType && isNumber(from.Kind()):
		if !rv.IsZero() {
			return nil, errStrict
		}
	case isInt(to.Kind()) && (from.Kind() == reflect.Float32 || from.Kind() == reflect.Float64):
		if f := rv.Float(); f != math.Trunc(f) {
			return nil, errStrict
		}
	case to.Kind() == reflect.String && from.Kind() == reflect.Bool:
		return nil, errStrict
	case to.Kind() == reflect.Bool && from.Kind() == reflect.String:
		b, ok := boolWords[strings.ToLower(rv.String())]
		if !ok {
			return nil, errStrict
		}
		return b, nil
	}
	return v, nil
}

// yamlDateToString turns a YAML date (2026-01-01, decoded as a time) back into text for text
// options.
func yamlDateToString(_, to reflect.Type, v any) (any, error) {
	if t, ok := v.(time.Time); ok && to.Kind() == reflect.String {
		if t.Equal(t.Truncate(24 * time.Hour)) {
			return t.Format("2006-01-02"), nil
		}
		return t.Format(time.RFC3339), nil
	}
	return v, nil
}

func isInt(k reflect.Kind) bool { return k >= reflect.Int && k <= reflect.Uint64 }

func isNumber(k reflect.Kind) bool {
	return isInt(k) || k == reflect.Float32 || k == reflect.Float64
}

// valueError says why v does not decode into type t: what was wanted, and for a list the
// first item at fault.
func valueError(v any, t reflect.Type) error {
	switch v := v.(type) {
	case map[string]any:
		return fmt.Errorf("want %s, not keys", want(t))
	case []any:
		if t.Kind() != reflect.Slice {
			return fmt.Errorf("want %s, not a list", want(t))
		}
		for i, item := range v {
			if err := decodeValue(item, reflect.New(t.Elem()).Elem()); err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
		}
	}
	return fmt.Errorf("%s is not %s", strconv.Quote(fmt.Sprint(v)), want(t))
}

// want says what a value of type t looks like, for messages.
func want(t reflect.Type) string {
	switch k := t.Kind(); {
	case t == durationType:
		return "a duration (like 30s, 5m or 1h30m)"
	case k == reflect.Bool:
		return "true or false"
	case isInt(k):
		return "a whole number"
	case k == reflect.Float32 || k == reflect.Float64:
		return "a number"
	case k == reflect.Slice:
		return "a list"
	}
	return "text"
}
