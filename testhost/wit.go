package testhost

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// This file parses the subset of WIT (the WebAssembly Interface Type language)
// that wit/policy.wit uses:
//
//	package ns:name@version;
//	interface name { record | enum | variant | type alias ... }
//	world name { use iface.{a, b}; export f: func(p: t, ...) -> t; import ...; }
//
// with the types bool, s8..s64, u8..u64, f32, f64, char, string, option<T>,
// list<T>, result<T, E> (and result<_, E>, result<T>, result), tuple<...>, and
// named types; `///` doc comments, `//` and `/* */` comments. Anything else
// (flags, resources, interface exports, nested packages) is a parse error
// rather than silently ignored, so the contract cannot outgrow the checker.

// TypeKind says what a Type is.
type TypeKind int

const (
	KindPrim   TypeKind = iota // Name is the primitive: "u32", "string", ...
	KindNamed                  // Name refers to a TypeDef
	KindOption                 // Elem
	KindList                   // Elem
	KindResult                 // Ok and Err, either may be nil
	KindTuple                  // Elems
)

// Type is a WIT type expression.
type Type struct {
	Kind    TypeKind
	Name    string
	Elem    *Type
	Ok, Err *Type
	Elems   []*Type
}

func (t *Type) String() string {
	if t == nil {
		return "_"
	}
	switch t.Kind {
	case KindOption:
		return "option<" + t.Elem.String() + ">"
	case KindList:
		return "list<" + t.Elem.String() + ">"
	case KindResult:
		switch {
		case t.Ok == nil && t.Err == nil:
			return "result"
		case t.Err == nil:
			return "result<" + t.Ok.String() + ">"
		default:
			return "result<" + t.Ok.String() + ", " + t.Err.String() + ">"
		}
	case KindTuple:
		parts := make([]string, len(t.Elems))
		for i, e := range t.Elems {
			parts[i] = e.String()
		}
		return "tuple<" + strings.Join(parts, ", ") + ">"
	}
	return t.Name
}

// DefKind says what a TypeDef declares.
type DefKind string

const (
	DefRecord  DefKind = "record"
	DefEnum    DefKind = "enum"
	DefVariant DefKind = "variant"
	DefAlias   DefKind = "type"
)

// TypeDef is a named type of an interface.
type TypeDef struct {
	Name      string
	Kind      DefKind
	Interface string
	Doc       string
	Fields    []Field // record
	Cases     []Case  // enum (Type nil) and variant
	Target    *Type   // alias
}

// Field is a record field.
type Field struct {
	Name string
	Type *Type
	Doc  string
}

// Case is an enum or variant case; Type is a variant case's payload, or nil.
type Case struct {
	Name string
	Type *Type
	Doc  string
}

// Param is a function parameter.
type Param struct {
	Name string
	Type *Type
}

// Func is a world's export or import.
type Func struct {
	Name   string
	Params []Param
	Result *Type // nil: no result
	Doc    string
}

// World is a WIT world.
type World struct {
	Name    string
	Uses    map[string]string // type name -> interface
	Exports []Func
	Imports []Func
}

// WIT is a parsed document.
type WIT struct {
	Package    string
	Interfaces []string
	Types      map[string]*TypeDef // by name; names are unique across interfaces
	Order      []string            // type names in declaration order (generated code follows the contract's order)
	Worlds     []*World
}

// World returns the named world, or the only one when name is "".
func (w *WIT) World(name string) (*World, error) {
	if name == "" && len(w.Worlds) == 1 {
		return w.Worlds[0], nil
	}
	for _, wd := range w.Worlds {
		if wd.Name == name {
			return wd, nil
		}
	}
	return nil, fmt.Errorf("wit: no world %q", name)
}

// ExportNames lists the world's export names, sorted.
func (wd *World) ExportNames() []string {
	names := make([]string, len(wd.Exports))
	for i, f := range wd.Exports {
		names[i] = f.Name
	}
	sort.Strings(names)
	return names
}

// Export returns the named export.
func (wd *World) Export(name string) (Func, bool) {
	for _, f := range wd.Exports {
		if f.Name == name {
			return f, true
		}
	}
	return Func{}, false
}

// LowerCamel maps a WIT kebab-case name to its JSON key: provider-retry-after-ms
// becomes providerRetryAfterMs.
func LowerCamel(kebab string) string {
	parts := strings.Split(kebab, "-")
	var b strings.Builder
	for i, p := range parts {
		if i > 0 && p != "" {
			r := []rune(p)
			r[0] = unicode.ToUpper(r[0])
			p = string(r)
		}
		b.WriteString(p)
	}
	return b.String()
}

var primitives = map[string]bool{
	"bool": true, "s8": true, "s16": true, "s32": true, "s64": true,
	"u8": true, "u16": true, "u32": true, "u64": true,
	"f32": true, "f64": true, "float32": true, "float64": true, "char": true, "string": true,
}

// ---- lexer

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokPunct // { } ( ) < > , : ; . = * @ / ->
	tokDoc   // a /// line, text after the slashes
	tokVersion
)

type token struct {
	kind tokKind
	text string
	line int
}

func lexWIT(src string) ([]token, error) {
	var toks []token
	line := 1
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "///"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			toks = append(toks, token{tokDoc, strings.TrimPrefix(strings.TrimPrefix(src[i:i+end], "///"), " "), line})
			i += end
		case strings.HasPrefix(src[i:], "//"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			i += end
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("line %d: unterminated /* comment", line)
			}
			line += strings.Count(src[i:i+2+end+2], "\n")
			i += 2 + end + 2
		case strings.HasPrefix(src[i:], "->"):
			toks = append(toks, token{tokPunct, "->", line})
			i += 2
		case c == '@':
			// A semver: everything up to whitespace or ';'.
			j := i + 1
			for j < len(src) && !strings.ContainsRune(" \t\r\n;{", rune(src[j])) {
				j++
			}
			toks = append(toks, token{tokPunct, "@", line}, token{tokVersion, src[i+1 : j], line})
			i = j
		case strings.ContainsRune("{}()<>,:;.=*/_", rune(c)) && !(c == '_' && i+1 < len(src) && isIdentByte(src[i+1])):
			toks = append(toks, token{tokPunct, string(c), line})
			i++
		case c == '%' || isIdentByte(c):
			j := i
			if c == '%' {
				j++
			}
			for j < len(src) && (isIdentByte(src[j]) || src[j] == '-') {
				j++
			}
			toks = append(toks, token{tokIdent, strings.TrimPrefix(src[i:j], "%"), line})
			i = j
		default:
			return nil, fmt.Errorf("line %d: unexpected character %q", line, c)
		}
	}
	return append(toks, token{tokEOF, "", line}), nil
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// ---- parser

type witParser struct {
	toks []token
	pos  int
	doc  []string // pending doc comment lines
	w    *WIT
}

// ParseWIT parses a WIT document and checks that every name resolves.
func ParseWIT(src string) (*WIT, error) {
	toks, err := lexWIT(src)
	if err != nil {
		return nil, err
	}
	p := &witParser{toks: toks, w: &WIT{Types: map[string]*TypeDef{}}}
	if err := p.file(); err != nil {
		return nil, err
	}
	if err := p.w.resolve(); err != nil {
		return nil, err
	}
	return p.w, nil
}

type witError struct {
	line int
	msg  string
}

func (e *witError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

func (p *witParser) fail(format string, a ...any) {
	panic(&witError{p.peek().line, fmt.Sprintf(format, a...)})
}

// peek returns the next non-doc token, collecting doc lines on the way.
func (p *witParser) peek() token {
	for p.toks[p.pos].kind == tokDoc {
		p.doc = append(p.doc, p.toks[p.pos].text)
		p.pos++
	}
	return p.toks[p.pos]
}

func (p *witParser) next() token {
	t := p.peek()
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

// takeDoc returns and clears the pending doc comment.
func (p *witParser) takeDoc() string {
	p.peek()
	d := strings.Join(p.doc, "\n")
	p.doc = nil
	return d
}

func (p *witParser) is(text string) bool {
	t := p.peek()
	return (t.kind == tokPunct || t.kind == tokIdent) && t.text == text
}

func (p *witParser) accept(text string) bool {
	if p.is(text) {
		p.next()
		return true
	}
	return false
}

func (p *witParser) expect(text string) {
	if !p.accept(text) {
		t := p.peek()
		if t.kind == tokEOF {
			p.fail("expected %q, found end of file", text)
		}
		p.fail("expected %q, found %q", text, t.text)
	}
}

func (p *witParser) ident() string {
	t := p.next()
	if t.kind != tokIdent {
		if t.kind == tokEOF {
			p.fail("expected a name, found end of file")
		}
		p.pos--
		p.fail("expected a name, found %q", t.text)
	}
	return t.text
}

func (p *witParser) file() (err error) {
	defer func() {
		if r := recover(); r != nil {
			we, ok := r.(*witError)
			if !ok {
				panic(r)
			}
			err = we
		}
	}()
	p.takeDoc()
	if p.accept("package") {
		var b strings.Builder
		b.WriteString(p.ident())
		p.expect(":")
		b.WriteString(":" + p.ident())
		for p.accept("/") {
			b.WriteString("/" + p.ident())
		}
		if p.accept("@") {
			t := p.next()
			if t.kind != tokVersion {
				p.fail("expected a version after @")
			}
			b.WriteString("@" + t.text)
		}
		p.expect(";")
		p.w.Package = b.String()
	}
	for {
		p.takeDoc()
		switch {
		case p.peek().kind == tokEOF:
			return nil
		case p.accept("interface"):
			p.iface()
		case p.accept("world"):
			p.world()
		default:
			p.fail("expected interface or world, found %q", p.peek().text)
		}
	}
}

func (p *witParser) iface() {
	name := p.ident()
	for _, n := range p.w.Interfaces {
		if n == name {
			p.fail("interface %q declared twice", name)
		}
	}
	p.w.Interfaces = append(p.w.Interfaces, name)
	p.expect("{")
	for !p.accept("}") {
		doc := p.takeDoc()
		line := p.peek().line
		kw := p.ident()
		def := &TypeDef{Kind: DefKind(kw), Interface: name, Doc: doc}
		switch kw {
		case "record":
			def.Name = p.ident()
			p.expect("{")
			for !p.accept("}") {
				fdoc := p.takeDoc()
				fname := p.ident()
				p.expect(":")
				def.Fields = append(def.Fields, Field{Name: fname, Type: p.typ(), Doc: fdoc})
				if !p.accept(",") {
					p.expect("}")
					break
				}
			}
		case "enum", "variant":
			def.Name = p.ident()
			p.expect("{")
			for !p.accept("}") {
				cdoc := p.takeDoc()
				c := Case{Name: p.ident(), Doc: cdoc}
				if kw == "variant" && p.accept("(") {
					c.Type = p.typ()
					p.expect(")")
				}
				def.Cases = append(def.Cases, c)
				if !p.accept(",") {
					p.expect("}")
					break
				}
			}
			if len(def.Cases) == 0 {
				p.fail("%s %s has no cases", kw, def.Name)
			}
		case "type":
			def.Name = p.ident()
			p.expect("=")
			def.Target = p.typ()
			p.expect(";")
		default:
			p.pos--
			p.fail("unsupported interface item %q (the checker knows record, enum, variant, type)", kw)
		}
		if _, dup := p.w.Types[def.Name]; dup {
			panic(&witError{line, fmt.Sprintf("type %q declared twice", def.Name)})
		}
		p.w.Types[def.Name] = def
		p.w.Order = append(p.w.Order, def.Name)
	}
}

func (p *witParser) world() {
	wd := &World{Name: p.ident(), Uses: map[string]string{}}
	p.expect("{")
	for !p.accept("}") {
		doc := p.takeDoc()
		switch {
		case p.accept("use"):
			iface := p.ident()
			p.expect(".")
			p.expect("{")
			for !p.accept("}") {
				wd.Uses[p.ident()] = iface
				if !p.accept(",") {
					p.expect("}")
					break
				}
			}
			p.expect(";")
		case p.is("export") || p.is("import"):
			dir := p.ident()
			name := p.ident()
			if !p.accept(":") {
				p.fail("unsupported %s of an interface (%s): the checker knows function %ss only", dir, name, dir)
			}
			f := p.fn(name, doc)
			p.expect(";")
			if dir == "export" {
				wd.Exports = append(wd.Exports, f)
			} else {
				wd.Imports = append(wd.Imports, f)
			}
		default:
			p.fail("unsupported world item %q", p.peek().text)
		}
	}
	for _, other := range p.w.Worlds {
		if other.Name == wd.Name {
			p.fail("world %q declared twice", wd.Name)
		}
	}
	p.w.Worlds = append(p.w.Worlds, wd)
}

func (p *witParser) fn(name, doc string) Func {
	f := Func{Name: name, Doc: doc}
	p.expect("func")
	p.expect("(")
	for !p.accept(")") {
		pn := p.ident()
		p.expect(":")
		f.Params = append(f.Params, Param{Name: pn, Type: p.typ()})
		if !p.accept(",") {
			p.expect(")")
			break
		}
	}
	if p.accept("->") {
		f.Result = p.typ()
	}
	return f
}

func (p *witParser) typ() *Type {
	if p.accept("_") {
		p.fail("_ is only allowed as result's ok type")
	}
	name := p.ident()
	switch name {
	case "option", "list":
		p.expect("<")
		t := &Type{Kind: KindOption, Elem: p.typ()}
		if name == "list" {
			t.Kind = KindList
		}
		p.expect(">")
		return t
	case "result":
		t := &Type{Kind: KindResult}
		if p.accept("<") {
			if !p.accept("_") {
				t.Ok = p.typ()
			}
			if p.accept(",") {
				t.Err = p.typ()
			} else if t.Ok == nil {
				p.fail("result<_> needs an error type")
			}
			p.expect(">")
		}
		return t
	case "tuple":
		t := &Type{Kind: KindTuple}
		p.expect("<")
		for !p.accept(">") {
			t.Elems = append(t.Elems, p.typ())
			if !p.accept(",") {
				p.expect(">")
				break
			}
		}
		return t
	}
	if primitives[name] {
		return &Type{Kind: KindPrim, Name: name}
	}
	return &Type{Kind: KindNamed, Name: name}
}

// resolve checks every named reference: interface types must refer to types
// of the document, a world's uses to its interface's types, and a world's
// functions only to the types it uses.
func (w *WIT) resolve() error {
	var errs []string
	var walk func(t *Type, where string, ok func(string) bool)
	walk = func(t *Type, where string, ok func(string) bool) {
		if t == nil {
			return
		}
		switch t.Kind {
		case KindNamed:
			if !ok(t.Name) {
				errs = append(errs, fmt.Sprintf("%s: unknown type %q", where, t.Name))
			}
		case KindOption, KindList:
			walk(t.Elem, where, ok)
		case KindResult:
			walk(t.Ok, where, ok)
			walk(t.Err, where, ok)
		case KindTuple:
			for _, e := range t.Elems {
				walk(e, where, ok)
			}
		}
	}
	names := make([]string, 0, len(w.Types))
	for n := range w.Types {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		def := w.Types[n]
		inIface := func(name string) bool { d := w.Types[name]; return d != nil && d.Interface == def.Interface }
		for _, f := range def.Fields {
			walk(f.Type, n+"."+f.Name, inIface)
		}
		for _, c := range def.Cases {
			walk(c.Type, n+"."+c.Name, inIface)
		}
		walk(def.Target, n, inIface)
	}
	for _, wd := range w.Worlds {
		for name, iface := range wd.Uses {
			if d := w.Types[name]; d == nil || d.Interface != iface {
				errs = append(errs, fmt.Sprintf("world %s: use %s.{%s}: no such type in interface %s", wd.Name, iface, name, iface))
			}
		}
		used := func(name string) bool { _, ok := wd.Uses[name]; return ok }
		seen := map[string]bool{}
		for _, f := range append(append([]Func{}, wd.Exports...), wd.Imports...) {
			if seen[f.Name] {
				errs = append(errs, fmt.Sprintf("world %s: %s declared twice", wd.Name, f.Name))
			}
			seen[f.Name] = true
			for _, prm := range f.Params {
				walk(prm.Type, wd.Name+"."+f.Name+"("+prm.Name+")", used)
			}
			walk(f.Result, wd.Name+"."+f.Name+" result", used)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("wit: %s", strings.Join(errs, "; "))
	}
	return nil
}
