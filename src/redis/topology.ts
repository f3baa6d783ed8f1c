import { config, type HostPort } from '../config';
import { withoutPassword } from '../lib/serviceErrors';

const list = (nodes: HostPort[]) => nodes.map((n) => (n.host.includes(':') ? `[${n.host}]:${n.port}` : `${n.host}:${n.port}`)).join(',');

/**
 * Where this process's Redis is, for messages: `redis://127.0.0.1:6379` and the setting that says
 * so (REDIS_URL), the master of the Sentinels (REDIS_SENTINELS), or the cluster's nodes
 * (REDIS_CLUSTER_NODES).
 */
export function redisWhere(): { where: string; setting: string } {
  const c = config();
  switch (c.redis.kind) {
    case 'sentinel': return { where: `the master "${c.redis.name}" of the Sentinels ${list(c.redis.sentinels)}`, setting: 'REDIS_SENTINELS' };
    case 'cluster': return { where: `the cluster of ${list(c.redis.nodes)}`, setting: 'REDIS_CLUSTER_NODES' };
    default: return { where: withoutPassword(c.redisUrl), setting: 'REDIS_URL' };
  }
}
