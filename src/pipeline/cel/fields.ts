/**
 * Which top-level fields of `event` an expression reads, from its AST: lets
 * runtime::cel give it just those fields, taken from an undecoded frame
 * (codecs/json/top-level.ts), instead of the whole decoded event.
 */
import type { parse } from '@bufbuild/cel';

type Expr = ReturnType<typeof parse>['expr'];

/**
 * The names `event.NAME` and `has(event.NAME)` read, in order of first use;
 * undefined when the expression uses `event` any other way (`event` alone,
 * `event["x"]`, `size(event)`, `"x" in event`, a comprehension over it) or
 * binds a comprehension variable called `event`: then it needs the whole
 * event. An expression that never names `event` reads none (`[]`).
 */
export function eventFields(expr: Expr): string[] | undefined {
  const fields: string[] = [];
  return walk(expr, fields) ? fields : undefined;
}

/** false as soon as `event` is used other than through a field. */
function walk(e: Expr | undefined, fields: string[]): boolean {
  if (e === undefined) return true;
  const k = e.exprKind;
  switch (k.case) {
    case 'identExpr':
      return k.value.name !== 'event'; // a bare `event`
    case 'selectExpr': {
      const operand = k.value.operand;
      if (operand?.exprKind.case === 'identExpr' && operand.exprKind.value.name === 'event') {
        if (!fields.includes(k.value.field)) fields.push(k.value.field);
        return true;
      }
      return walk(operand, fields);
    }
    case 'callExpr':
      return walk(k.value.target, fields) && (k.value.args as Expr[]).every((a) => walk(a, fields));
    case 'listExpr':
      return (k.value.elements as Expr[]).every((x) => walk(x, fields));
    case 'structExpr':
      return k.value.entries.every((entry) => (entry.keyKind.case !== 'mapKey' || walk(entry.keyKind.value, fields)) && walk(entry.value, fields));
    case 'comprehensionExpr': {
      const c = k.value;
      // a variable named event would shadow the event: not worth following
      if (c.iterVar === 'event' || c.iterVar2 === 'event' || c.accuVar === 'event') return false;
      return [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result].every((x) => walk(x, fields));
    }
    case 'constExpr':
      return true;
    default:
      return false; // a kind not known here: assume the worst
  }
}

/**
 * The strings an expression can give when every result it can give is a
 * string literal (`"errors"`, `event.level == "error" ? "errors" : "out"`,
 * nested conditionals of such): a `route` of runtime::cel then names its
 * ports in its config, and a link from a port it cannot name is refused at
 * publish. Undefined when some result is computed (`event.target`): any port.
 */
export function literalStrings(expr: Expr | undefined): string[] | undefined {
  if (expr === undefined) return undefined;
  const k = expr.exprKind;
  if (k.case === 'constExpr') return k.value.constantKind.case === 'stringValue' ? [k.value.constantKind.value] : undefined;
  if (k.case === 'callExpr' && k.value.function === '_?_:_' && k.value.args.length === 3) {
    const [, then, otherwise] = k.value.args as Expr[];
    const a = literalStrings(then);
    const b = literalStrings(otherwise);
    return a && b ? [...new Set([...a, ...b])] : undefined;
  }
  return undefined;
}
