package hookprompt

import (
	"strconv"
	"text/template/parse"
)

// Names of the functions the rewrite calls. A leading underscore keeps
// them apart from the documented ones; a template may still call them.
const (
	fieldFunc = "_field"
	textFunc  = "_text"
	iterFunc  = "_iter"
)

// rewrite makes tree lenient (see the package doc): every field chain
// becomes a call of fieldFunc, every action that prints ends in textFunc,
// and every range's pipeline in iterFunc.
func rewrite(tree *parse.Tree) {
	walkList(tree, tree.Root)
}

func walkList(tree *parse.Tree, l *parse.ListNode) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.ActionNode:
			walkPipe(tree, n.Pipe)
			if len(n.Pipe.Decl) == 0 { // {{$x := …}} prints nothing
				n.Pipe.Cmds = append(n.Pipe.Cmds, command(n.Pos, parse.NewIdentifier(textFunc).SetTree(tree).SetPos(n.Pos)))
			}
		case *parse.IfNode:
			walkBranch(tree, &n.BranchNode)
		case *parse.RangeNode:
			walkBranch(tree, &n.BranchNode)
			n.Pipe.Cmds = append(n.Pipe.Cmds, command(n.Pos, parse.NewIdentifier(iterFunc).SetTree(tree).SetPos(n.Pos)))
		case *parse.WithNode:
			walkBranch(tree, &n.BranchNode)
		case *parse.TemplateNode:
			walkPipe(tree, n.Pipe)
		}
	}
}

func walkBranch(tree *parse.Tree, b *parse.BranchNode) {
	walkPipe(tree, b.Pipe)
	walkList(tree, b.List)
	walkList(tree, b.ElseList)
}

func walkPipe(tree *parse.Tree, p *parse.PipeNode) {
	if p == nil {
		return
	}
	for _, c := range p.Cmds {
		for i, a := range c.Args {
			c.Args[i] = lenient(tree, a)
		}
	}
}

// lenient returns the node to evaluate instead of n: a lookup through
// fieldFunc for a field chain, n itself (with its insides rewritten) for
// anything else.
func lenient(tree *parse.Tree, n parse.Node) parse.Node {
	switch n := n.(type) {
	case *parse.FieldNode:
		return lookup(tree, n.Pos, &parse.DotNode{NodeType: parse.NodeDot, Pos: n.Pos}, n.Ident)
	case *parse.VariableNode:
		if len(n.Ident) > 1 {
			v := &parse.VariableNode{NodeType: parse.NodeVariable, Pos: n.Pos, Ident: n.Ident[:1]}
			return lookup(tree, n.Pos, v, n.Ident[1:])
		}
	case *parse.ChainNode:
		return lookup(tree, n.Pos, lenient(tree, n.Node), n.Field)
	case *parse.PipeNode:
		walkPipe(tree, n)
	}
	return n
}

// lookup is the parenthesised pipeline (_field RECV "k1" "k2" …).
func lookup(tree *parse.Tree, pos parse.Pos, recv parse.Node, keys []string) parse.Node {
	args := []parse.Node{parse.NewIdentifier(fieldFunc).SetTree(tree).SetPos(pos), recv}
	for _, k := range keys {
		args = append(args, &parse.StringNode{NodeType: parse.NodeString, Pos: pos, Quoted: strconv.Quote(k), Text: k})
	}
	return &parse.PipeNode{NodeType: parse.NodePipe, Pos: pos, Cmds: []*parse.CommandNode{command(pos, args...)}}
}

func command(pos parse.Pos, args ...parse.Node) *parse.CommandNode {
	return &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pos, Args: args}
}
