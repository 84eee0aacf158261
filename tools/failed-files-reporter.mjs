// A node:test reporter that writes the file of every failed test, one per line, so that tools/run-tests.mjs can run
// those files again. A failure with no file (the runner itself) is written as "?" so that no retry hides it.
export default async function* failedFiles(source) {
  for await (const event of source) {
    if (event.type === 'test:fail') yield `${event.data.file ?? '?'}\n`;
  }
}
