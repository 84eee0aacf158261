// Delegation tokens in the metadata store, where a Kafka broker in ZooKeeper mode keeps them:
//
//   /delegation_token/tokens/<tokenId>                      the token's JSON (token-info.ts)
//   /delegation_token/token_changes/token_change_<seq>      a notification whose data is the token id
//
// Every write of a token (create, renew, expire, removal) goes in one multi with its notification, so the other
// brokers, which watch token_changes, read the token again (or drop it when it is gone) within a moment.

import type { CoordinationStore, Op } from '../../controller/store/store.js';
import { decodeToken, encodeToken, type TokenInformation } from './token-info.js';

export const DELEGATION_TOKEN_PATH = '/delegation_token';
export const TOKENS_PATH = '/delegation_token/tokens';
export const TOKEN_CHANGES_PATH = '/delegation_token/token_changes';
export const TOKEN_CHANGE_PREFIX = 'token_change_';
/** Notifications older than this are deleted by whichever broker sees them (Kafka's changeExpirationMs). */
export const TOKEN_CHANGE_EXPIRATION_MS = 15 * 60 * 1000;

/** Token ids are Kafka's 22 URL-safe base64 characters; anything else is not read as a token node. */
const TOKEN_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function tokenPath(tokenId: string): string {
  if (!TOKEN_ID.test(tokenId)) throw new Error(`token id ${JSON.stringify(tokenId)} is not a znode name`);
  return `${TOKENS_PATH}/${tokenId}`;
}

export class TokenStoreError extends Error {}

export class TokenStore {
  constructor(private readonly store: CoordinationStore) {}

  /** The nodes Kafka's createDelegationTokenPaths creates, needed before their children can be watched. */
  async ensurePaths(): Promise<void> {
    for (const path of [DELEGATION_TOKEN_PATH, TOKENS_PATH, TOKEN_CHANGES_PATH]) {
      const created = await this.store.create(path, new Uint8Array(0));
      if (!created.ok && created.code !== 'NODEEXISTS') {
        throw new TokenStoreError(`creating ${path}: ${created.code}`);
      }
    }
  }

  /** The token, or null when there is none (or its data is not a token). */
  async read(tokenId: string): Promise<TokenInformation | null> {
    if (!TOKEN_ID.test(tokenId)) return null;
    const node = await this.store.get(tokenPath(tokenId));
    if (!node.ok) {
      if (node.code === 'NONODE') return null;
      throw new TokenStoreError(`reading token ${tokenId}: ${node.code}`);
    }
    const token = decodeToken(node.value.data);
    return token !== null && token.tokenId === tokenId ? token : null;
  }

  async readAll(): Promise<TokenInformation[]> {
    const ids = await this.store.children(TOKENS_PATH);
    if (!ids.ok) return [];
    const tokens = await Promise.all(ids.value.map((id) => this.read(id)));
    return tokens.filter((t): t is TokenInformation => t !== null);
  }

  /** Creates or replaces the token's node, with its notification. */
  async write(token: TokenInformation): Promise<void> {
    const path = tokenPath(token.tokenId);
    const data = encodeToken(token);
    for (let attempt = 0; attempt < 5; attempt++) {
      const exists = await this.store.exists(path);
      if (!exists.ok) throw new TokenStoreError(`writing token ${token.tokenId}: ${exists.code}`);
      const write: Op =
        exists.value === null
          ? { op: 'create', path, data, mode: 'persistent' }
          : { op: 'set', path, data, version: exists.value.version };
      const result = await this.store.multi([write, this.notification(token.tokenId)]);
      if (result.ok) return;
      if (result.code !== 'NODEEXISTS' && result.code !== 'BADVERSION' && result.code !== 'NONODE') {
        throw new TokenStoreError(`writing token ${token.tokenId}: ${result.code}`);
      }
    }
    throw new TokenStoreError(`writing token ${token.tokenId}: too many concurrent updates`);
  }

  /** Deletes the token's node, with its notification; false when it was already gone. */
  async remove(tokenId: string): Promise<boolean> {
    const result = await this.store.multi([
      { op: 'delete', path: tokenPath(tokenId), version: -1 },
      this.notification(tokenId),
    ]);
    if (result.ok) return true;
    if (result.code === 'NONODE') return false;
    throw new TokenStoreError(`deleting token ${tokenId}: ${result.code}`);
  }

  private notification(tokenId: string): Op {
    return {
      op: 'create',
      path: `${TOKEN_CHANGES_PATH}/${TOKEN_CHANGE_PREFIX}`,
      data: Buffer.from(tokenId, 'utf8'),
      mode: 'persistent_sequential',
    };
  }

  /** Notification names, with the watch set; null when the store refused. */
  async changeNames(onChange: () => void): Promise<string[] | null> {
    const children = await this.store.children(TOKEN_CHANGES_PATH, onChange);
    return children.ok ? children.value.filter((n) => n.startsWith(TOKEN_CHANGE_PREFIX)) : null;
  }

  /** The token id a notification names and its age; null when it is gone. */
  async readChange(name: string, nowMs: number): Promise<{ tokenId: string; ageMs: number } | null> {
    const node = await this.store.get(`${TOKEN_CHANGES_PATH}/${name}`);
    if (!node.ok) return null;
    return {
      tokenId: Buffer.from(node.value.data).toString('utf8'),
      ageMs: nowMs - node.value.stat.ctimeMs,
    };
  }

  async deleteChange(name: string): Promise<void> {
    await this.store.delete(`${TOKEN_CHANGES_PATH}/${name}`, -1);
  }
}

export function changeSequence(name: string): number {
  const seq = Number(name.slice(TOKEN_CHANGE_PREFIX.length));
  return Number.isSafeInteger(seq) ? seq : -1;
}
