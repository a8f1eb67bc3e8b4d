package gdrivetest

import (
	"fmt"
	"strings"
)

// pred decides whether a file matches, for the calling user ('root' is theirs).
type pred func(f *File, user string) bool

// parseQuery compiles the subset of Drive's query language the connector uses: and, or, not,
// parentheses, 'ID' in parents, and name/mimeType with =, != or contains, trashed = true|false.
func parseQuery(q string) (pred, error) {
	if strings.TrimSpace(q) == "" {
		return func(f *File, _ string) bool { return !f.Trashed }, nil
	}
	p := &parser{toks: lex(q)}
	e, err := p.or()
	if err == nil && p.i < len(p.toks) {
		err = fmt.Errorf("unexpected %q", p.toks[p.i])
	}
	return e, err
}

func lex(q string) []string {
	var toks []string
	for i := 0; i < len(q); {
		switch c := q[i]; {
		case c == ' ':
			i++
		case c == '(' || c == ')':
			toks = append(toks, string(c))
			i++
		case c == '\'':
			var b strings.Builder
			b.WriteByte('\'')
			for i++; i < len(q) && q[i] != '\''; i++ {
				if q[i] == '\\' && i+1 < len(q) {
					i++
				}
				b.WriteByte(q[i])
			}
			toks = append(toks, b.String())
			i++
		default:
			j := i
			for j < len(q) && q[j] != ' ' && q[j] != '(' && q[j] != ')' {
				j++
			}
			toks = append(toks, q[i:j])
			i = j
		}
	}
	return toks
}

type parser struct {
	toks []string
	i    int
}

func (p *parser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *parser) take() string { t := p.peek(); p.i++; return t }

func (p *parser) or() (pred, error) {
	l, err := p.and()
	for err == nil && p.peek() == "or" {
		p.take()
		var r pred
		if r, err = p.and(); err == nil {
			a, b := l, r
			l = func(f *File, u string) bool { return a(f, u) || b(f, u) }
		}
	}
	return l, err
}

func (p *parser) and() (pred, error) {
	l, err := p.factor()
	for err == nil && p.peek() == "and" {
		p.take()
		var r pred
		if r, err = p.factor(); err == nil {
			a, b := l, r
			l = func(f *File, u string) bool { return a(f, u) && b(f, u) }
		}
	}
	return l, err
}

func (p *parser) factor() (pred, error) {
	switch t := p.take(); {
	case t == "(":
		e, err := p.or()
		if err == nil && p.take() != ")" {
			err = fmt.Errorf("missing )")
		}
		return e, err
	case t == "not":
		e, err := p.factor()
		return func(f *File, u string) bool { return !e(f, u) }, err
	case strings.HasPrefix(t, "'"):
		if p.take() != "in" || p.take() != "parents" {
			return nil, fmt.Errorf("only 'ID' in parents is supported after %s", t)
		}
		id := t[1:]
		return func(f *File, u string) bool {
			want := id
			if id == "root" {
				want = Root(u)
			}
			for _, par := range f.Parents {
				if par == want {
					return true
				}
			}
			return false
		}, nil
	default:
		op, v := p.take(), p.take()
		field := map[string]func(*File) string{
			"name": func(f *File) string { return f.Name }, "mimeType": func(f *File) string { return f.MimeType },
			"trashed": func(f *File) string { return fmt.Sprint(f.Trashed) },
		}[t]
		if field == nil {
			return nil, fmt.Errorf("unknown field %q", t)
		}
		v = strings.TrimPrefix(v, "'")
		switch op {
		case "=":
			return func(f *File, _ string) bool { return field(f) == v }, nil
		case "!=":
			return func(f *File, _ string) bool { return field(f) != v }, nil
		case "contains":
			return func(f *File, _ string) bool { return strings.Contains(field(f), v) }, nil
		}
		return nil, fmt.Errorf("unknown operator %q", op)
	}
}
