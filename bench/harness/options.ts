// The number options of the benchmarks that parse their own arguments (`--records 30000`).

/** The number after `name` in `args`, or `fallback` when the option or its value is missing. */
export function numberOption(args: readonly string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : fallback;
}
