import { NEW_KINDS, checkType, kindOfType, skeleton, type NewKind } from '../config/skeleton';
import { Registries } from '../runtime/registries';
import { idProblem } from '../schema/ids';
import { kindNamed, unknownKind } from '../runtime/type-info';
import { defineCommand } from './command';

interface NewOptions {
  kind: NewKind;
  /** the artefact's id (and an operator's node id); from the type's name when absent */
  id: string | undefined;
  type: string;
}

/** `KIND TYPE` or `TYPE`: the kind a word names, if it is one `eddy new` writes. */
function newKind(word: string): NewKind {
  const kind = kindNamed(word);
  if (kind === undefined) throw new Error(unknownKind(word));
  if (!(NEW_KINDS as readonly string[]).includes(kind)) {
    throw new Error(`eddy new writes onramps, offramps and operators (a pipeline); a ${kind} is named inside a ramp: eddy list ${kind}s`);
  }
  return kind as NewKind;
}

export const newCommand = defineCommand({
  name: 'new',
  summary: 'print a config file to start from, for one onramp, offramp or operator type',
  description:
    'KIND is onramp, offramp or operator; it may be left out when only one of them has a type of that name (kafka is an onramp and ' +
    "an offramp, runtime::cel only an operator). The file holds every field of the type's config with its type, default and " +
    'description: the required ones as null placeholders (their comment says required), the optional ones commented out. An operator ' +
    'comes as a pipeline of one node. Exit 2 for an unknown or ambiguous type, with the nearest name.',
  operands: '[KIND] TYPE',
  flags: {
    id: { type: 'string', value: 'ID', description: "the artefact's id (default: the type's name without its namespace, batch for generic::batch)" },
  },
  options: ({ operands, values }): NewOptions => {
    const problem = values.id === undefined ? undefined : idProblem(values.id);
    if (problem !== undefined) throw new Error(`--id: ${problem}`);
    if (operands.length === 0) throw new Error('which type? e.g. eddy new onramp metronome (eddy list names them)');
    if (operands.length > 2) throw new Error(`KIND TYPE at most, not ${operands.length} arguments`);
    const [kind, type] = operands.length === 2 ? [newKind(operands[0]), operands[1]] : [undefined, operands[0]];
    // the type is checked here, so that a wrong one is bad usage (exit 2) as a wrong kind is
    const registries = Registries.withBuiltins();
    const resolved = kind ?? kindOfType(registries, type);
    checkType(registries, resolved, type);
    return { kind: resolved, type, id: values.id };
  },
  run: (options, io) => {
    io.out(skeleton(Registries.withBuiltins(), options.kind, options.type, options.id));
    return Promise.resolve(0);
  },
});
