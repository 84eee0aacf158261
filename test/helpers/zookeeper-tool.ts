// A plain ZooKeeper client of a test's own (node-zookeeper-client), standing for an operator's tool: it writes
// nodes behind the broker's back and changes their ACLs, so that a test can make the broker's reads of a node fail
// (NOAUTH) and work again.

import * as zk from 'node-zookeeper-client';

const anyone = new zk.Id('world', 'anyone');
/** Everything for everyone: a node readable again. */
export const ACL_OPEN = [new zk.ACL(zk.Permission.ALL, anyone)];
/** Administer only: reads answer NOAUTH, and the ACL can be opened again. */
export const ACL_ADMIN_ONLY = [new zk.ACL(zk.Permission.ADMIN, anyone)];

/** A connected client; rejects when no session opens within 10 s. The caller closes it. */
export async function connectedZooKeeperTool(connect: string): Promise<zk.Client> {
  const client = zk.createClient(connect);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      client.close();
      reject(new Error('no ZooKeeper session in 10 s'));
    }, 10_000);
    client.once('connected', () => {
      clearTimeout(timer);
      resolve();
    });
    client.connect();
  });
  return client;
}

/** One callback-style client call as a promise. */
export function zooKeeperCall(run: (done: (error: unknown) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => run((error) => (error ? reject(error) : resolve())));
}

/** Sets the ACL of `path` through a client opened for it and closed after. */
export async function setZooKeeperAcl(connect: string, path: string, acls: zk.ACL[]): Promise<void> {
  const client = await connectedZooKeeperTool(connect);
  try {
    await zooKeeperCall((done) => client.setACL(path, acls, -1, done));
  } finally {
    client.close();
  }
}
