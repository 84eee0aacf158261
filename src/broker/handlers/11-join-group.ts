// JoinGroup (11): a member joins or rejoins a classic group; the answer waits until the group's join phase ends
// (see coordinator/group/group-coordinator.ts). v0 has no rebalance timeout (the session timeout stands in for
// it, as in Kafka); from v4 a member without an id first gets one with MEMBER_ID_REQUIRED; v5 adds
// group.instance.id (static membership); v7 echoes the protocol type; v9 tells a rejoining static leader to
// skip the assignment (before v9 it is answered as a follower; see rejoinStaticMember).

import type { JoinRequest } from '../../coordinator/group/group-coordinator.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { JoinGroupRequest, JoinGroupResponse } from '../../protocol/messages/11-join-group.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeGroup } from '../authorization.js';

export const joinGroupHandler = defineHandler<JoinGroupRequest, JoinGroupResponse>({
  apiKey: ApiKey.JOIN_GROUP,
  minVersion: 0,
  maxVersion: 9,
  async handle(context, request) {
    const version = context.apiVersion;
    if (!authorizeGroup(context, AclOperation.READ, request.groupId)) {
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
        generationId: -1,
        protocolType: null,
        protocolName: version >= 7 ? null : '',
        leader: '',
        skipAssignment: false,
        memberId: '',
        members: [],
      };
    }
    const join: JoinRequest = {
      groupId: request.groupId,
      memberId: request.memberId,
      groupInstanceId: version >= 5 ? request.groupInstanceId : null,
      clientId: context.header.clientId ?? '',
      clientHost: `/${context.connection.remoteAddress}`,
      sessionTimeoutMs: request.sessionTimeoutMs,
      rebalanceTimeoutMs: version >= 1 ? request.rebalanceTimeoutMs : request.sessionTimeoutMs,
      protocolType: request.protocolType,
      protocols: request.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
      requireKnownMemberId: version >= 4,
      supportsSkippingAssignment: version >= 9,
    };
    const result = await context.services.groupCoordinator.join(join);
    return {
      throttleTimeMs: 0,
      errorCode: result.errorCode,
      generationId: result.generationId,
      protocolType: result.protocolType,
      // Before v7 the protocol name is not nullable.
      protocolName: version >= 7 ? result.protocolName : (result.protocolName ?? ''),
      leader: result.leader,
      skipAssignment: result.skipAssignment,
      memberId: result.memberId,
      members: result.members.map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        metadata: m.metadata,
      })),
    };
  },
});
