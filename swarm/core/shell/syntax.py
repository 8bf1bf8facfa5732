"""The tree-sitter nodes where bash evaluates text beyond commands, fed to an `Evaluation`.

`shellparse` walks every node; for the kinds in NODE_KINDS it calls `visit`, which hands the
evaluation (`shelleval`) what bash will evaluate: the text of `$(( ))`, `(( ))`, `for (( ))`,
subscripts, `${x:offset}`; the names `[[ -v ]]` takes and the operands `[[ -eq ]]` evaluates;
and what the command assigns (`x=..`, `for x in ..`, `declare -i/-n/-A`, `${x:=..}`). It also
mends two misreadings: tree-sitter takes some `$((x))` and `((x))` for nested subshells.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarm.core.shell.evaluation import ARITH_TESTS, Evaluation, bracketed

if TYPE_CHECKING:
    from tree_sitter import Node


def visit(ev: Evaluation, node: Node, data: bytes) -> None:
    """One node of a kind in NODE_KINDS (the walk in shellparse visits them all)."""
    kind, children = node.type, node.children
    if kind in ("arithmetic_expansion", "compound_statement", "c_style_for_statement"):
        opens = [c for c in children if c.type in ("$((", "$[", "((")]
        closes = [c for c in children if c.type in ("))", "]")]
        if opens and closes:
            ev.arith(_between(data, opens[0], closes[-1]))
    elif kind == "subscript" and children and children[0].type == "variable_name":
        brackets = [c for c in children if c.type in ("[", "]")]
        if len(brackets) == 2:
            ev.subscripts.append((_text(children[0], data),
                                    _between(data, brackets[0], brackets[1])))
    elif kind in ("command_substitution", "subshell"):
        # tree-sitter reads some `$((x))` and `((x))` as nested subshells; bash does not.
        text = _text(node, data)
        lead = 3 if kind == "command_substitution" else 2
        if text.startswith("$(("[3 - lead:]) and text.endswith("))"):
            ev.arith(text[lead:-2])
    elif kind == "expansion":
        _expansion(ev, children, data)
    elif kind == "test_command" and children:
        _tests(ev, node, data, children[0].type == "[[")
    elif kind == "for_statement":
        _loop(ev, children, data)
    elif kind in ("declaration_command", "unset_command") and children:
        _declaration(ev, children, data)
    elif kind == "variable_assignment" and children and (
            node.parent is None or node.parent.type != "c_style_for_statement"):
        _assignment(ev, children, data)


def _expansion(ev: Evaluation, children: list[Node], data: bytes) -> None:
    types = [c.type for c in children]
    target = next((c for c in children if c.type in _TARGETS), None)
    name = _name(target, data)
    at = types.index("@") if "@" in types[2:] else -1
    transform = _text(children[at + 1], data) if 0 < at < len(children) - 1 and \
        types[at + 1] != "}" else None
    code = transform is not None and transform not in TEXT_TRANSFORMS
    indirect = types[1:2] == ["!"] and not _lists(types, target, data)
    if indirect and code:
        ev.opaque(f"a value named by another is expanded again (${{!{name or '?'}@{transform}}})")
    elif (indirect or code) and name is not None:
        ev.uses.add(name)  # ${!x}: x's value is a name; ${x@P}: a prompt, $(..) and all
    if name is None:
        return
    if ":" in types:
        colon = children[types.index(":")]
        ev.arith(data[colon.end_byte : children[-1].start_byte].decode(errors="replace"))
    elif ("=" in types or ":=" in types) and target is not None and \
            target.type != "special_variable_name":
        if indirect:  # ${!x:=v} assigns to the variable x names: any of them
            ev.sets_any = True
            return
        at = types.index("=") if "=" in types else types.index(":=")
        value = children[at + 1] if at + 1 < len(children) - 1 else None
        ev.assign(name, "" if value is None else _value(ev, value, data), by_builtin=True)


# ${x@Q} ${x@U} ${x@u} ${x@L} ${x@a} ${x@A} ${x@K} ${x@k}: text from the value, never run; any
# other transformation (P: a prompt, with $(..); E: escapes; what a later bash adds) may be.
TEXT_TRANSFORMS = frozenset("QUuLaAKk")
_TARGETS = frozenset({"variable_name", "subscript", "special_variable_name"})


def _name(target: Node | None, data: bytes) -> str | None:
    """The variable an expansion reads (`x` of `x[0]`, `@`, `1`)."""
    if target is not None and target.type == "subscript":
        target = target.children[0] if target.children else None
    return _text(target, data) if target is not None else None


def _lists(types: list[str], target: Node | None, data: bytes) -> bool:
    """`${!x*}` `${!x@}` list names, `${!x[@]}` `${!x[*]}` keys: nothing is expanded again."""
    if types[-1:] != ["}"] or target is None or target.type == "special_variable_name":
        return False
    if types[2:] in (["variable_name", "*", "}"], ["variable_name", "@", "}"]):
        return True
    return types[2:] == ["subscript", "}"] and _text(target, data).endswith(("[@]", "[*]"))


def _tests(ev: Evaluation, node: Node, data: bytes, double: bool) -> None:
    """`[[ -v name ]]`, `[ -v name ]`; `[[ a -eq b ]]` evaluates a and b as arithmetic."""
    for child in node.children:
        if child.type not in _EXPRESSIONS:
            continue
        op, operands = "", []
        for part in child.children:
            if part.type == "test_operator":
                op = op or _text(part, data)
            elif part.is_named and (part.type not in _EXPRESSIONS or _negated(part) is not part):
                operands.append(_negated(part))
        if op == "-v" and operands:
            ev.name(ev.word(operands[0], data))
        elif double and op in ARITH_TESTS:
            for operand in operands:
                ev.arith_word(ev.word(operand, data))
        _tests(ev, child, data, double)


def _loop(ev: Evaluation, children: list[Node], data: bytes) -> None:
    """`for x in words` gives x each word; `for x` the arguments; `select x` the input."""
    names = [c for c in children if c.type == "variable_name"]
    if not names:
        return
    name, types = _text(names[0], data), [c.type for c in children]
    if types[0] == "select" or "in" not in types:
        ev.assign(name, None, by_builtin=True)
        return
    for value in children[types.index("in") + 1:]:
        if value.is_named and value.type not in ("do_group", "comment"):
            word = ev.word(value, data)
            ev.assign(name, word.text if word.literal else None, by_builtin=True)


def _declaration(ev: Evaluation, children: list[Node], data: bytes) -> None:
    program = children[0].type
    words = [c for c in children[1:] if c.type != "comment"]
    flags = "".join(_text(c, data)[1:] for c in words
                    if c.type == "word" and _text(c, data)[:1] == "-")
    if program == "unset" and "f" in flags:
        return
    for child in words:
        if child.type == "word" and _text(child, data)[:1] in "-+":
            continue
        if program == "unset":
            ev.name(ev.word(child, data))
        elif child.type == "variable_name":
            ev.attributes(flags, _text(child, data))
        elif child.type == "variable_assignment":  # its value: the walk reaches it
            target = child.children[0] if child.children else None
            while target is not None and target.type == "subscript":
                target = target.children[0] if target.children else None
            if target is not None and target.type == "variable_name":
                ev.attributes(flags, _text(target, data))
        else:
            ev.declare(program, flags, ev.word(child, data))


def _assignment(ev: Evaluation, children: list[Node], data: bytes) -> None:
    target = children[0]
    if target.type == "subscript" and target.children:
        target = target.children[0]
    if target.type != "variable_name":
        return
    name = _text(target, data)
    ops = [i for i, c in enumerate(children) if c.type in ("=", "+=")]
    value = children[ops[0] + 1] if ops and ops[0] + 1 < len(children) else None
    if value is None:
        ev.assign(name, "")
    elif value.type == "array":
        for element in value.children:
            if element.is_named and element.type != "comment":
                text = _text(element, data)
                if text.startswith("["):  # ([key]=value)
                    key = bracketed(text)
                    ev.subscripts.append((name, key))
                    text = text[len(key) + 3:]
                word = ev.word(element, data)
                ev.assign(name, text if word.literal or "$" not in text else None)
    else:
        ev.assign(name, _value(ev, value, data))


def _value(ev: Evaluation, node: Node, data: bytes) -> str | None:
    """An assigned value: its text when known; a number for `$((..))` and `${#x}`."""
    if node.type == "arithmetic_expansion" or (
            node.type == "expansion" and [c.type for c in node.children[1:2]] == ["#"]):
        return "0"
    word = ev.word(node, data)
    return word.text if word.literal else None


NODE_KINDS = frozenset({"arithmetic_expansion", "compound_statement", "c_style_for_statement",
                        "subscript", "expansion", "test_command", "for_statement",
                        "declaration_command", "unset_command", "variable_assignment",
                        "command_substitution", "subshell"})


_EXPRESSIONS = frozenset({"unary_expression", "binary_expression", "parenthesized_expression"})


def _negated(node: Node) -> Node:
    """tree-sitter reads `[[ ! x -eq 1 ]]` as `(! x) -eq 1`: the operand is x."""
    if node.type != "unary_expression":
        return node
    children = node.children
    named = [c for c in children if c.is_named]
    if children[0].type == "!" and len(named) == 1 and named[0].type not in _EXPRESSIONS:
        return named[0]
    return node


def _text(node: Node, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode(errors="replace")


def _between(data: bytes, first: Node, last: Node) -> str:
    return data[first.end_byte : last.start_byte].decode(errors="replace")
