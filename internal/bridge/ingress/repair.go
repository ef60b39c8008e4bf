package ingress

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// repair is one change made to an update so the client library can decode
// it: a value dropped, or replaced by a stand-in.
type repair struct {
	Path   string `json:"path"`   // e.g. message.forward_origin
	Action string `json:"action"` // "dropped" or "replaced"
	Err    string `json:"error"`  // why the library refused the value
}

const (
	actionDropped  = "dropped"
	actionReplaced = "replaced"
)

// repairDepthLimit bounds how deep the repairer descends. Real updates nest
// a few levels (a reply inside a message inside a callback query); a hostile
// server nesting deeper only loses the deepest parts. (A variable so a test
// can make the repairer give up.)
var repairDepthLimit = 24

// repairer makes a JSON value decodable into a Go type of the library's
// models by removing, as locally as it can, what the type's decoder
// refuses. It is guided by reflection over the target type, so it covers
// the union types listed in unions, plain type mismatches (a string where a
// number belongs) and any field a future library version adds.
//
// The rules, applied from the leaves up:
//   - a value that decodes is kept as it is, byte for byte;
//   - an object keeps every member it can, a list every element it can;
//     members and elements that cannot be repaired are dropped;
//   - a union of an unknown variant is replaced by its stand-in if it has
//     one (a forward origin), else dropped;
//   - an object loses itself (its parent drops it) when an essential field
//     cannot be read, or when a field it holds by value can neither be read
//     nor left out (the library could not even marshal its zero value).
type repairer struct {
	repairs []repair
	// encodable also requires that what is kept can be encoded again by
	// the library's MarshalJSON methods: the bridge stores each message it
	// routes (to survive a crash), and a union the library decoded from an
	// incomplete object (a fill background without its fill) cannot be
	// encoded.
	encodable bool
}

// fix returns raw, or a repaired copy, that decodes into t; ok is false when
// nothing can be made of it. err is why raw itself does not decode.
func (r *repairer) fix(raw []byte, t reflect.Type, path string, depth int) (out []byte, ok bool, err error) {
	if err = r.accepts(raw, t); err == nil {
		return raw, true, nil
	}
	if depth > repairDepthLimit {
		return nil, false, err
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if spec, isUnion := unions[t]; isUnion {
		return r.fixUnion(raw, t, spec, path, depth, err)
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil, false, err // a decoder of its own that the repairer does not know
	}
	switch t.Kind() {
	case reflect.Struct:
		out, ok = r.fixObject(raw, t, path, depth)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, false, err // base64 bytes: a leaf
		}
		out, ok = r.fixList(raw, t, path, depth)
	case reflect.Map:
		out, ok = r.fixMap(raw, t, path, depth)
	default:
		return nil, false, err // a scalar of the wrong kind
	}
	if ok && r.accepts(out, t) != nil {
		ok = false // what is left still does not decode: give up on this value
	}
	return out, ok, err
}

func (r *repairer) fixUnion(raw []byte, t reflect.Type, spec unionSpec, path string, depth int, err error) ([]byte, bool, error) {
	variant, _, perr := spec.pick(raw)
	if perr == nil {
		if out, ok, _ := r.fix(raw, variant, path, depth+1); ok && r.accepts(out, t) == nil {
			return out, true, err
		}
	}
	if spec.substitute != nil {
		sub := spec.substitute(raw)
		r.repairs = append(r.repairs, repair{Path: path, Action: actionReplaced, Err: err.Error()})
		return sub, true, err
	}
	return nil, false, err
}

func (r *repairer) fixObject(raw []byte, t reflect.Type, path string, depth int) ([]byte, bool) {
	members, ok := objectMembers(raw)
	if !ok {
		return nil, false
	}
	fields := fieldsOf(t)
	kept := members[:0]
	for _, m := range members {
		f, known := fields.lookup(m.key)
		if !known {
			kept = append(kept, m) // the decoder ignores it
			continue
		}
		sub := f.name
		if path != "" {
			sub = path + "." + f.name
		}
		out, ok, err := r.fix(m.val, f.typ, sub, depth+1)
		if ok {
			kept = append(kept, member{m.key, out})
			continue
		}
		if essential[t][f.name] || !canLeaveOut(f.typ) {
			return nil, false
		}
		r.repairs = append(r.repairs, repair{Path: sub, Action: actionDropped, Err: err.Error()})
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range kept {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(m.key)
		b.Write(key)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes(), true
}

func (r *repairer) fixList(raw []byte, t reflect.Type, path string, depth int) ([]byte, bool) {
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return nil, false
	}
	kept := elems[:0]
	for i, e := range elems {
		sub := path + "[" + strconv.Itoa(i) + "]"
		out, ok, err := r.fix(e, t.Elem(), sub, depth+1)
		if !ok {
			r.repairs = append(r.repairs, repair{Path: sub, Action: actionDropped, Err: err.Error()})
			continue
		}
		kept = append(kept, out)
	}
	out, err := json.Marshal(kept)
	return out, err == nil
}

func (r *repairer) fixMap(raw []byte, t reflect.Type, path string, depth int) ([]byte, bool) {
	var entries map[string]json.RawMessage
	if json.Unmarshal(raw, &entries) != nil {
		return nil, false
	}
	for k, v := range entries {
		sub := k
		if path != "" {
			sub = path + "." + k
		}
		out, ok, err := r.fix(v, t.Elem(), sub, depth+1)
		if !ok {
			r.repairs = append(r.repairs, repair{Path: sub, Action: actionDropped, Err: err.Error()})
			delete(entries, k)
			continue
		}
		entries[k] = out
	}
	out, err := json.Marshal(entries)
	return out, err == nil
}

// canLeaveOut reports whether a struct field of type t may be absent. A
// pointer, list, map or interface is then nil, a plain value is zero; but
// the zero value of a union, or of a struct holding one by value, cannot
// even be marshalled by the library (MarshalJSON fails on it), and the
// bridge marshals messages to keep them across a crash. So the test is
// whether the zero value marshals.
func canLeaveOut(t reflect.Type) bool {
	if ok, cached := zeroMarshals.Load(t); cached {
		return ok.(bool)
	}
	_, err := json.Marshal(reflect.New(t).Interface())
	zeroMarshals.Store(t, err == nil)
	return err == nil
}

var zeroMarshals sync.Map // reflect.Type → bool

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func decodeInto(raw []byte, t reflect.Type) error {
	return json.Unmarshal(raw, reflect.New(t).Interface())
}

// accepts reports why raw is not good enough as a value of type t.
func (r *repairer) accepts(raw []byte, t reflect.Type) error {
	v := reflect.New(t).Interface()
	if err := json.Unmarshal(raw, v); err != nil {
		return err
	}
	if r.encodable {
		if _, err := json.Marshal(v); err != nil {
			return fmt.Errorf("decodes but cannot be encoded again: %w", err)
		}
	}
	return nil
}

// member is one "key": value of a JSON object, in document order;
// duplicates are kept, as the decoder sees them.
type member struct {
	key string
	val json.RawMessage
}

func objectMembers(raw []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, member{key, v})
	}
	return out, true
}

// jsonField is a struct field as encoding/json names it.
type jsonField struct {
	name string
	typ  reflect.Type
}

type fieldSet []jsonField

// lookup matches a key the way encoding/json does: exactly, else ignoring
// case.
func (fs fieldSet) lookup(key string) (jsonField, bool) {
	for _, f := range fs {
		if f.name == key {
			return f, true
		}
	}
	for _, f := range fs {
		if strings.EqualFold(f.name, key) {
			return f, true
		}
	}
	return jsonField{}, false
}

var fieldCache sync.Map // reflect.Type → fieldSet

func fieldsOf(t reflect.Type) fieldSet {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(fieldSet)
	}
	var fs fieldSet
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				fs = append(fs, fieldsOf(ft)...) // promoted, as encoding/json does
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		fs = append(fs, jsonField{name: name, typ: f.Type})
	}
	fieldCache.Store(t, fs)
	return fs
}
