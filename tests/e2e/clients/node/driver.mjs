// The @kubernetes/client-node driver of kubegc's client tests: test_client_node.py sends
// one JSON request a line on stdin ({id, op, ...}) and reads one JSON answer a line on
// stdout ({id, result} or {id, error: {code, message}}); a watch's events come as
// {watch, type, object} lines. The calls are the client's own: the typed CoreV1Api
// (create, read, list, patch with setHeaderOptions('Content-Type', …), delete with a
// propagationPolicy), KubernetesObjectApi for server-side apply, CustomObjectsApi for
// kubegc's DeletionRecords, and Watch.
import * as readline from 'node:readline';
import * as k8s from '@kubernetes/client-node';

const kc = new k8s.KubeConfig();
kc.loadFromFile(process.argv[2]);
const core = kc.makeApiClient(k8s.CoreV1Api);
const custom = kc.makeApiClient(k8s.CustomObjectsApi);
const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
const namespace = process.argv[3];
const watches = new Map();
const STRATEGY = {
  json: k8s.PatchStrategy.JsonPatch,
  merge: k8s.PatchStrategy.MergePatch,
  strategic: k8s.PatchStrategy.StrategicMergePatch,
};

function send(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

// The typed method for a verb: createNamespacedConfigMap, readNamespace, ...
function typed(verb, kind, params) {
  const method = `${verb}${kind.namespaced ? 'Namespaced' : ''}${kind.kind}`;
  return (options) => core[method]({...params, ...(kind.namespaced ? {namespace} : {})},
    options);
}

function path(kind) {
  const base = kind.apiVersion.includes('/') ? `/apis/${kind.apiVersion}` : '/api/v1';
  return kind.namespaced ? `${base}/namespaces/${namespace}/${kind.plural}`
    : `${base}/${kind.plural}`;
}

function startWatch(kind, query, onEvent, onError) {
  return new k8s.Watch(kc).watch(path(kind), query, onEvent, (err) => {
    if (err && err.name !== 'AbortError') onError(err);
  });
}

// client-go's UntilWithSync idea: list the one object, then watch from the list's
// resourceVersion until it is DELETED.
async function waitDeleted({kind, name, seconds}) {
  const fieldSelector = `metadata.name=${name}`;
  const listed = await typed('list', kind, {fieldSelector})();
  if (listed.items.length === 0) return null;
  let request;
  try {
    return await new Promise((resolve, reject) => {
      setTimeout(() => reject(new Error(`${kind.kind} ${name} still there after ${seconds}s`)),
        seconds * 1000);
      request = startWatch(kind, {fieldSelector,
        resourceVersion: listed.metadata.resourceVersion},
      (type) => type === 'DELETED' && resolve(null), reject);
    });
  } finally {
    (await request)?.abort();
  }
}

const ops = {
  create: ({obj}) => typed('create', {kind: obj.kind, namespaced: obj.kind !== 'Namespace'},
    {body: obj})(),
  get: async ({kind, name}) => {
    try {
      return await typed('read', kind, {name})();
    } catch (e) {
      if (e.code === 404) return null;
      throw e;
    }
  },
  list: async ({kind, labelSelector}) => {
    if (kind.kind === 'DeletionRecord') {
      const [group, version] = kind.apiVersion.split('/');
      return (await custom.listClusterCustomObject({group, version, plural: kind.plural,
        labelSelector})).items;
    }
    return (await typed('list', kind, {labelSelector})()).items;
  },
  patch: ({kind, name, patch, patchType}) => typed('patch', kind, {name, body: patch})(
    k8s.setHeaderOptions('Content-Type', STRATEGY[patchType])),
  apply: ({obj, fieldManager}) => objects.patch(obj, undefined, undefined, fieldManager, true,
    k8s.PatchStrategy.ServerSideApply),
  delete: async ({kind, name, propagationPolicy}) => {
    await typed('delete', kind, {name, propagationPolicy})();
    return null;
  },
  waitDeleted,
  watch: async ({watchId, kind, labelSelector}) => {
    watches.set(watchId, await startWatch(kind, {labelSelector},
      (type, object) => send({watch: watchId, type, object}),
      (err) => send({watch: watchId, error: String(err)})));
    return null;
  },
  stopWatch: ({watchId}) => {
    watches.get(watchId)?.abort();
    watches.delete(watchId);
    return null;
  },
};

readline.createInterface({input: process.stdin}).on('line', async (line) => {
  const request = JSON.parse(line);
  try {
    send({id: request.id, result: (await ops[request.op](request)) ?? null});
  } catch (e) {
    send({id: request.id, error: {code: e.code ?? null, message: String(e.body ?? e)}});
  }
}).on('close', () => process.exit(0));
