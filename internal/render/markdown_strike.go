package render

import (
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// doubleTildeParser is GFM strikethrough restricted to "~~". Goldmark's own
// extension also accepts a single '~', which Claude routinely writes to mean
// "approximately" ("~5 min … ~2x"), striking out whole sentences.
type doubleTildeParser struct{}

func (doubleTildeParser) Trigger() []byte { return []byte{'~'} }

func (doubleTildeParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, segment := block.PeekLine()
	node := parser.ScanDelimiter(line, before, 1, tildeDelimiter{})
	if node == nil || node.OriginalLength != 2 || before == '~' {
		return nil
	}
	node.Segment = segment.WithStop(segment.Start + node.OriginalLength)
	block.Advance(node.OriginalLength)
	pc.PushDelimiter(node)
	return node
}

func (doubleTildeParser) CloseBlock(parent ast.Node, pc parser.Context) {}

type tildeDelimiter struct{}

func (tildeDelimiter) IsDelimiter(b byte) bool { return b == '~' }

func (tildeDelimiter) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char
}

func (tildeDelimiter) OnMatch(consumes int) ast.Node { return east.NewStrikethrough() }
