// Run-time log levels: loggers created over a LogLevels take their own level, else their nearest ancestor's, else
// the root's, and follow a change from their next line on.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LOGGER_NAMES_MAX, LogLevels } from '../../src/common/log-levels.js';
import { createLogger } from '../../src/common/logger.js';

function capture(levels: LogLevels) {
  const lines: string[] = [];
  const root = createLogger('brook', levels, (line) => lines.push(line));
  return { lines, root, controller: root.child('controller') };
}

test('a logger writes at its own level, else its nearest ancestor’s, else the root’s, and follows changes', () => {
  const levels = new LogLevels('INFO');
  const { lines, root, controller } = capture(levels);
  controller.debug('hidden');
  levels.set('brook', 'DEBUG');
  controller.debug('shown through brook');
  levels.set('brook.controller', 'ERROR');
  controller.warn('hidden by its own level');
  root.debug('brook still at DEBUG');
  levels.unset('brook.controller');
  levels.unset('brook');
  controller.debug('hidden again');
  controller.info('shown at the root level');
  assert.deepEqual(
    lines.map((l) => l.replace(/^\[[^\]]+\] /, '')),
    [
      'DEBUG brook.controller: shown through brook',
      'DEBUG brook: brook still at DEBUG',
      'INFO brook.controller: shown at the root level',
    ],
  );
  assert.deepEqual(levels.loggers(), [
    ['root', 'INFO'],
    ['brook', 'INFO'],
    ['brook.controller', 'INFO'],
  ]);
});

test('TRACE lets trace and debug lines through, DEBUG stops trace lines, FATAL stops error lines', () => {
  const levels = new LogLevels('TRACE');
  const { lines, root } = capture(levels);
  assert.equal(root.enabled('trace'), true);
  root.trace('trace at trace');
  root.debug('debug at trace');
  levels.set('root', 'DEBUG');
  assert.equal(root.enabled('trace'), false);
  root.trace('trace at debug');
  levels.set('root', 'FATAL');
  root.error('at fatal');
  assert.deepEqual(
    lines.map((l) => l.replace(/^\[[^\]]+\] /, '')),
    ['TRACE brook: trace at trace', 'DEBUG brook: debug at trace'],
  );
  assert.equal(levels.levelOf('brook'), 'FATAL');
});

test('only loggers that were created exist, and the names kept are bounded', () => {
  const levels = new LogLevels('INFO');
  capture(levels);
  assert.equal(levels.exists('root'), true);
  assert.equal(levels.exists('brook.controller'), true);
  assert.equal(levels.exists('brook.nothing'), false);
  for (let i = 0; i < LOGGER_NAMES_MAX + 10; i++) levels.register(`extra.${i}`);
  assert.equal(levels.loggers().length, LOGGER_NAMES_MAX + 1);
});
