// ChannelSender: how the controller's requests to one broker are retried. A broker still starting answers
// COORDINATOR_LOAD_IN_PROGRESS (broker/not-ready.ts): the request is sent again after a backoff rather than
// taken as answered, which would leave that broker without the LeaderAndIsr or UpdateMetadata it was sent. A
// non-retriable answer (STALE_BROKER_EPOCH: the request was for an earlier run of the broker) is final.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import { silentLogger } from '../../src/common/logger.js';
import { type BrokerChannel, ChannelSender, type ControllerResponse } from '../../src/controller/channel.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { UpdateMetadataRequest } from '../../src/protocol/messages/06-update-metadata.js';

const BROKER = 2 as BrokerId;

function updateMetadata(): UpdateMetadataRequest {
  return {
    controllerId: 1,
    isKRaftController: false,
    type: 0,
    controllerEpoch: 1,
    brokerEpoch: 7n,
    ungroupedPartitionStates: [],
    topicStates: [],
    liveBrokers: [],
  };
}

/** A broker that answers UpdateMetadata with each code of `codes` in turn. */
function answering(codes: number[]): BrokerChannel & { attempts: number } {
  const channel = {
    attempts: 0,
    async updateMetadata() {
      const errorCode = codes[Math.min(channel.attempts, codes.length - 1)]!;
      channel.attempts++;
      return { errorCode };
    },
    leaderAndIsr: () => Promise.reject(new Error('not used')),
    stopReplica: () => Promise.reject(new Error('not used')),
  };
  return channel;
}

function sender(channel: BrokerChannel): ChannelSender {
  return new ChannelSender(channel, silentLogger, {
    attemptsMax: 5,
    backoffMs: 1,
    backoffMaxMs: 1,
    stillWanted: () => true,
    sleep: async () => {},
  });
}

async function send(s: ChannelSender): Promise<ControllerResponse | null> {
  let answer: ControllerResponse | null | undefined;
  s.send(BROKER, { kind: 'updateMetadata', request: updateMetadata() }, (a) => {
    answer = a;
  });
  await s.idle();
  assert.notEqual(answer, undefined, 'onAnswer was called');
  return answer!;
}

test('a request answered with a retriable error (a broker still starting) is sent again until it is taken', async () => {
  const channel = answering([
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.NONE,
  ]);
  const answer = await send(sender(channel));
  assert.equal(channel.attempts, 3);
  assert.equal(answer?.kind === 'updateMetadata' && answer.response.errorCode, ErrorCode.NONE);
});

test('a non-retriable error answer is final', async () => {
  const channel = answering([ErrorCode.STALE_BROKER_EPOCH, ErrorCode.NONE]);
  const answer = await send(sender(channel));
  assert.equal(channel.attempts, 1);
  assert.equal(answer?.kind === 'updateMetadata' && answer.response.errorCode, ErrorCode.STALE_BROKER_EPOCH);
});

test('a broker that never stops answering a retriable error is given up after the retry policy', async () => {
  const channel = answering([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS]);
  const answer = await send(sender(channel));
  assert.equal(channel.attempts, 5);
  assert.equal(
    answer?.kind === 'updateMetadata' && answer.response.errorCode,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  );
});

test('requests queued by a controller that resigned are not sent (chaos F4)', async () => {
  let release: () => void = () => {};
  const blocked = new Promise<void>((r) => {
    release = r;
  });
  const sent: number[] = [];
  let closes = 0;
  const channel: BrokerChannel = {
    close() {
      closes++;
    },
    async updateMetadata(_broker, request) {
      sent.push(request.controllerEpoch);
      if (sent.length === 1) await blocked;
      return { errorCode: ErrorCode.NONE };
    },
    leaderAndIsr: () => Promise.reject(new Error('not used')),
    stopReplica: () => Promise.reject(new Error('not used')),
  };
  const s = sender(channel);
  const answers: (ControllerResponse | null)[] = [];
  // The first is in flight (the broker is slow, or a partition holds it); two more wait behind it.
  for (let i = 0; i < 3; i++) {
    s.send(BROKER, { kind: 'updateMetadata', request: updateMetadata() }, (a) => answers.push(a));
  }
  await new Promise((r) => setImmediate(r));
  s.dropQueued();
  // A controller that wins again queues under the new generation: that one is sent.
  s.send(BROKER, { kind: 'updateMetadata', request: { ...updateMetadata(), controllerEpoch: 2 } }, (a) =>
    answers.push(a),
  );
  release();
  await s.idle();
  assert.deepEqual(sent, [1, 2], 'only the request in flight and the new controller one reached the broker');
  assert.equal(answers.length, 4);
  assert.equal(answers.filter((a) => a === null).length, 2, 'the dropped ones are answered null');
  assert.equal(closes, 1, 'the connections were closed, failing what was in flight');
});
