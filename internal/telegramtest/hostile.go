package telegramtest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// HostileUpdate is one getUpdates entry made by HostileBatch.
type HostileUpdate struct {
	// Build renders the entry for the update id the server assigns.
	Build func(id int64) []byte
	Kind  string // what the entry claims to be
	// Want is the user content that must survive (text, caption or
	// callback data), "" when the entry carries none or it was mangled.
	Want string
	// NoID marks an entry without a readable update_id.
	NoID bool
	// MaySkip marks a message or press that may be unreadable as a whole
	// (it is then skipped with a log line instead of routed).
	MaySkip bool
}

// fuzzSource turns fuzz bytes into choices; past the end it keeps
// answering zero, so every input makes a valid batch.
type fuzzSource struct {
	data []byte
	pos  int
}

func (s *fuzzSource) next() byte {
	if s.pos >= len(s.data) {
		return 0
	}
	b := s.data[s.pos]
	s.pos++
	return b
}

func (s *fuzzSource) intn(n int) int { return int(s.next()) % n }

// word is a short string straight from the fuzz bytes (any bytes: JSON
// encoding makes invalid UTF-8 valid).
func (s *fuzzSource) word() string {
	n := s.intn(10)
	b := make([]byte, n)
	for i := range b {
		b[i] = s.next()
	}
	return string(b)
}

// canonical is s as it reads back from JSON (invalid UTF-8 replaced).
func canonical(s string) string {
	var out string
	_ = json.Unmarshal([]byte(quote(s)), &out)
	return out
}

func quote(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// value is a random JSON value, nested at most depth levels.
func (s *fuzzSource) value(depth int) string {
	switch k := s.intn(8); {
	case k == 0:
		return "null"
	case k == 1:
		return []string{"true", "false"}[s.intn(2)]
	case k == 2:
		return strconv.Itoa(int(int8(s.next())))
	case k == 3:
		return []string{"1.5", "-0", "1e400", "99999999999999999999999", "0.0"}[s.intn(5)]
	case k == 4 || depth <= 0:
		return quote(s.word())
	case k == 5:
		var parts []string
		for range s.intn(3) {
			parts = append(parts, s.value(depth-1))
		}
		return "[" + strings.Join(parts, ",") + "]"
	default:
		var parts []string
		for range s.intn(3) {
			parts = append(parts, quote("x_"+s.word())+":"+s.value(depth-1))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
}

// discriminator picks a value for a union's type/status/source: one the
// library knows, an unknown string, or not a string at all.
func (s *fuzzSource) discriminator(known ...string) string {
	switch s.intn(4) {
	case 0:
		return quote(known[s.intn(len(known))])
	case 1:
		return quote(s.word())
	case 2:
		return s.value(1)
	default:
		return quote("future_" + s.word())
	}
}

// union renders a union member: the discriminator, a few members of the
// known variants (sometimes of the wrong type) and unknown members.
func (s *fuzzSource) union(key string, known []string, fields ...string) string {
	parts := []string{quote(key) + ":" + s.discriminator(known...)}
	for _, f := range fields {
		if s.intn(3) == 0 {
			continue
		}
		parts = append(parts, f)
	}
	for range s.intn(3) {
		parts = append(parts, quote("x_"+s.word())+":"+s.value(2))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func (s *fuzzSource) origin() string {
	return s.union("type", []string{"user", "hidden_user", "chat", "channel"},
		`"date":1700000000`, `"sender_user":{"id":7,"is_bot":false,"first_name":"S"}`,
		`"sender_user_name":"Someone"`, `"chat":{"id":-100,"type":"channel","title":"C"}`, `"message_id":`+s.value(0))
}

func (s *fuzzSource) paidMedia() string {
	var items []string
	for range 1 + s.intn(3) {
		items = append(items, s.union("type", []string{"preview", "photo", "video"}, `"width":10`, `"photo":[]`, `"video":{"file_id":"v","file_unique_id":"u","width":1,"height":1,"duration":1}`))
	}
	return `{"star_count":3,"paid_media":[` + strings.Join(items, ",") + `]}`
}

func (s *fuzzSource) reactions() string {
	var items []string
	for range s.intn(4) {
		items = append(items, s.union("type", []string{"emoji", "custom_emoji", "paid"}, `"emoji":"👍"`, `"custom_emoji_id":"e"`))
	}
	return "[" + strings.Join(items, ",") + "]"
}

func (s *fuzzSource) member() string {
	return s.union("status", []string{"creator", "administrator", "member", "restricted", "left", "kicked"},
		`"user":{"id":7,"is_bot":false,"first_name":"S"}`, `"until_date":`+s.value(0))
}

func (s *fuzzSource) boostSource() string {
	return s.union("source", []string{"premium", "gift_code", "giveaway"}, `"user":{"id":7,"is_bot":false,"first_name":"S"}`, `"giveaway_message_id":1`)
}

// HostileBatch builds one to five getUpdates entries from data: messages and
// callback queries from user in chat carrying unions of unknown or mangled
// variants, updates of kinds the bridge does not ask for, values of the
// wrong type, and entries without an update_id.
func HostileBatch(data []byte, user, chat int64) []HostileUpdate {
	s := &fuzzSource{data: data}
	n := 1 + s.intn(5)
	out := make([]HostileUpdate, 0, n)
	from := fmt.Sprintf(`{"id":%d,"is_bot":false,"first_name":"Fuzz"}`, user)
	chatJSON := fmt.Sprintf(`{"id":%d,"type":"private","first_name":"Fuzz"}`, chat)
	message := func(id int64, content string, extra ...string) string {
		parts := append([]string{fmt.Sprintf(`"message_id":%d`, 1000+id), `"from":` + from, `"chat":` + chatJSON, `"date":1700000000`, content}, extra...)
		return "{" + strings.Join(parts, ",") + "}"
	}
	wrap := func(kind, payload string) func(int64) []byte {
		return func(id int64) []byte { return fmt.Appendf(nil, `{"update_id":%d,%s:%s}`, id, quote(kind), payload) }
	}
	for range n {
		text := canonical("fuzz " + s.word())
		textMember := `"text":` + quote(text)
		var extras []string
		for range s.intn(3) {
			extras = append(extras, quote("x_"+s.word())+":"+s.value(2))
		}
		var u HostileUpdate
		switch s.intn(13) {
		case 0:
			origin := s.origin()
			u = HostileUpdate{Kind: "message", Want: text, Build: func(id int64) []byte {
				return wrap("message", message(id, textMember, append(extras, `"forward_origin":`+origin)...))(id)
			}}
		case 1:
			pm := s.paidMedia()
			u = HostileUpdate{Kind: "message", Want: text, Build: func(id int64) []byte {
				return wrap("message", message(id, `"caption":`+quote(text), `"paid_media":`+pm))(id)
			}}
		case 2:
			fill := s.union("type", []string{"solid", "gradient", "freeform_gradient"}, `"color":1`, `"colors":[1,2]`)
			bg := s.union("type", []string{"fill", "wallpaper", "pattern", "chat_theme"}, `"fill":`+fill, `"dark_theme_dimming":1`, `"theme_name":"t"`, `"document":{"file_id":"d","file_unique_id":"u"}`)
			u = HostileUpdate{Kind: "message", Build: func(id int64) []byte {
				return wrap("message", message(id, `"chat_background_set":{"type":`+bg+`}`))(id)
			}}
		case 3:
			origin, pm := s.origin(), s.paidMedia()
			u = HostileUpdate{Kind: "message", Want: text, Build: func(id int64) []byte {
				return wrap("message", message(id, textMember, `"external_reply":{"origin":`+origin+`,"paid_media":`+pm+`}`))(id)
			}}
		case 4:
			date := []string{"0", "1700000000", s.value(1)}[s.intn(3)]
			origin := s.origin()
			u = HostileUpdate{Kind: "message", Want: text, Build: func(id int64) []byte {
				pinned := fmt.Sprintf(`{"message_id":1,"chat":%s,"date":%s,"text":"pinned","forward_origin":%s}`, chatJSON, date, origin)
				return wrap("message", message(id, textMember, `"pinned_message":`+pinned))(id)
			}}
		case 5:
			data := canonical("a:" + s.word())
			origin := s.origin()
			pick := s.intn(3)
			date := []string{"0", "1700000000", s.value(1)}[pick]
			u = HostileUpdate{Kind: "callback_query", Want: data, MaySkip: pick == 2, Build: func(id int64) []byte {
				msg := fmt.Sprintf(`{"message_id":1,"chat":%s,"date":%s,"text":"q","forward_origin":%s}`, chatJSON, date, origin)
				return wrap("callback_query", fmt.Sprintf(`{"id":"q%d","from":%s,"chat_instance":"ci","data":%s,"message":%s}`, id, from, quote(data), msg))(id)
			}}
		case 6:
			oldR, newR := s.reactions(), s.reactions()
			u = HostileUpdate{Kind: "message_reaction", Build: wrap("message_reaction",
				fmt.Sprintf(`{"chat":%s,"message_id":1,"date":1,"user":%s,"old_reaction":%s,"new_reaction":%s}`, chatJSON, from, oldR, newR))}
		case 7:
			r := s.union("type", []string{"emoji", "custom_emoji", "paid"}, `"emoji":"🔥"`)
			u = HostileUpdate{Kind: "message_reaction_count", Build: wrap("message_reaction_count",
				fmt.Sprintf(`{"chat":%s,"message_id":1,"date":1,"reactions":[{"type":%s,"total_count":2}]}`, chatJSON, r))}
		case 8:
			kind := []string{"my_chat_member", "chat_member"}[s.intn(2)]
			oldM, newM := s.member(), s.member()
			u = HostileUpdate{Kind: kind, Build: wrap(kind,
				fmt.Sprintf(`{"chat":%s,"from":%s,"date":1,"old_chat_member":%s,"new_chat_member":%s}`, chatJSON, from, oldM, newM))}
		case 9:
			src := s.boostSource()
			if s.intn(2) == 0 {
				u = HostileUpdate{Kind: "chat_boost", Build: wrap("chat_boost",
					fmt.Sprintf(`{"chat":%s,"boost":{"boost_id":"b","add_date":1,"expiration_date":2,"source":%s}}`, chatJSON, src))}
			} else {
				u = HostileUpdate{Kind: "removed_chat_boost", Build: wrap("removed_chat_boost",
					fmt.Sprintf(`{"chat":%s,"boost_id":"b","remove_date":1,"source":%s}`, chatJSON, src))}
			}
		case 10:
			kind := canonical("future_" + s.word())
			payload := s.value(3)
			u = HostileUpdate{Kind: kind, Build: wrap(kind, payload)}
		case 11:
			// A value of the wrong type in one member of an otherwise plain
			// message; the text survives unless it is the one hit.
			member := []string{"date", "entities", "text", "caption", "reply_markup", "message_thread_id"}[s.intn(6)]
			bad := s.value(2)
			content, want := textMember+","+quote(member)+":"+bad, text
			if member == "text" {
				content, want = `"text":`+bad, "" // survives only if the value happens to be a string
			}
			u = HostileUpdate{Kind: "message", Want: want, Build: func(id int64) []byte {
				return wrap("message", message(id, content))(id)
			}}
		default:
			// An entry the library cannot confirm: no update_id, a null, a
			// number, a string id.
			entry := []string{`null`, `42`, `{"message":{"text":"lost"}}`, `{"update_id":"7","message":{}}`, `{"update_id":1.5}`}[s.intn(5)]
			u = HostileUpdate{Kind: "", NoID: true, Build: func(int64) []byte { return []byte(entry) }}
		}
		out = append(out, u)
	}
	return out
}

// HostileSeeds reaches every template of HostileBatch with a few variants
// each, plus batches of several entries. Byte 0 sets the batch size, then
// per entry: the text's length and bytes, the count of extra members, the
// template, and what the template draws.
func HostileSeeds() [][]byte {
	var seeds [][]byte
	tails := [][]byte{nil, {1, 2, 3, 4, 5, 6, 7, 8}, {3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, {0xff, 0xfe, 0x80, 'x', 0, 9, 200, 17, 33, 2, 1}}
	for tmpl := range 13 {
		for _, tail := range tails {
			seeds = append(seeds, append([]byte{0, 0, 0, byte(tmpl)}, tail...))
		}
	}
	seeds = append(seeds,
		[]byte("\x04several updates in one batch, all different \x00\x01\x02\x03\x05\x07\x0b\x0d"),
		[]byte{4, 2, 'h', 'i', 1, 'k', 1, 0, 12, 0, 3, 1, 'a', 0, 5, 9, 9, 1, 0, 0, 0, 7, 1, 1, 1},
	)
	return seeds
}
