// Package filter compiles RocketMQ SQL92 property filters (MessageSelector.bySql)
// and evaluates them against a message's properties.
//
// # What it owns
//
// A small recursive-descent parser for the subset RocketMQ supports:
//
//	expr      := or
//	or        := and { OR and }
//	and       := not { AND not }
//	not       := NOT not | predicate
//	predicate := '(' expr ')'
//	           | TRUE | FALSE
//	           | operand ( '=' | '<>' | '<' | '<=' | '>' | '>=' ) operand
//	           | operand IS [NOT] NULL
//	           | operand [NOT] BETWEEN operand AND operand
//	           | operand [NOT] IN '(' literal { ',' literal } ')'
//	operand   := identifier | 'string' | number | TRUE | FALSE | NULL
//
// Keywords are case-insensitive; identifiers name message properties; strings
// are single-quoted with ” as an escaped quote; numbers are 64-bit integers or
// decimals (a leading '-' belongs to the literal).
//
// Evaluation follows Java's (ActiveMQ selector) three-valued logic: a missing
// property is NULL, any comparison with NULL is unknown, NOT unknown is unknown,
// and only a true result matches. Properties are strings on the wire; compared
// with a number or boolean literal they are parsed as one, and a value that does
// not parse makes the comparison unknown (RocketMQ's documented usage,
// putUserProperty("a", "7") matched by "a > 5"). Ordering operators (< <= > >=
// BETWEEN) are numeric only.
//
// It imports nothing of rocketraft: the broker adapts properties to a lookup
// function.
//
// # Concurrency
//
// An Expression is immutable after Compile and safe for concurrent Match calls.
//
// # Usage
//
//	e, err := filter.Compile("a > 5 AND b = 'x'")
//	if err != nil { /* errors.Is(err, filter.ErrSyntax): answer SUBSCRIPTION_PARSE_FAILED */ }
//	ok := e.Match(func(name string) (string, bool) { v, ok := props[name]; return v, ok })
package filter
