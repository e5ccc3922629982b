// Watches one async turn the way a browser app does, with the Appwrite Web SDK (npm "appwrite"): Realtime
// subscription to the progress rows (narrowed to the turn with a query), then an async execution created
// with the user's session. Prints one JSON line per row received and exits after the row of "complete".
// Run by TestWebSDKWatchesAnAsyncTurn (functions/turn/websdk_test.go); Node 20 needs the "ws" package for
// WebSocket, and a window/localStorage shim (the SDK reads its cookie fallback from there).
const { Client, Functions, Realtime, Channel, Query, ExecutionMethod } = require("appwrite");
// The socket is watched for the server's answer to "subscribe", so that the execution starts only once the
// subscription is in place (the SDK does not expose that answer).
let subscribed;
const subscribedOnce = new Promise((resolve) => (subscribed = resolve));
const BaseWebSocket = globalThis.WebSocket || require("ws");
globalThis.WebSocket = class extends BaseWebSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener("message", (ev) => {
      const m = JSON.parse(ev.data);
      if (m.type === "response" && m.data && m.data.to === "subscribe") subscribed();
    });
  }
};
globalThis.window = globalThis.window || globalThis;
globalThis.localStorage = globalThis.localStorage || { getItem: () => null, setItem: () => {}, removeItem: () => {} };

const env = (k) => {
  if (!process.env[k]) throw new Error(k + " is not set");
  return process.env[k];
};

async function main() {
  const client = new Client().setEndpoint(env("ENDPOINT")).setProject(env("PROJECT")).setSession(env("SESSION"));
  const turnId = env("TURN_ID");
  const done = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no complete within 60 s")), 60000);
    const realtime = new Realtime(client);
    realtime
      .subscribe(
        Channel.tablesdb(env("DATABASE")).table(env("TABLE")).row(),
        ({ events, payload }) => {
          const event = JSON.parse(payload.payload);
          console.log(JSON.stringify({ seq: payload.seq, turn_id: payload.turn_id, type: payload.type, event, events: events.length }));
          if (event.type === "complete") {
            clearTimeout(timer);
            realtime.disconnect ? realtime.disconnect() : null;
            resolve();
          }
        },
        [Query.equal("turn_id", turnId)],
      )
      .then(async () => {
        await subscribedOnce;
        const exec = await new Functions(client).createExecution({
          functionId: "turn",
          async: true,
          method: ExecutionMethod.POST,
          path: "/",
          headers: { "content-type": "application/json", "x-session-api-key": env("SESSION_KEY") },
          body: JSON.stringify({ message: "what time is it?", async: true, progress: { realtime: true, turn_id: turnId } }),
        });
        console.error("execution " + exec.$id + " " + exec.status);
      })
      .catch(reject);
  });
  await done;
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e && e.stack ? e.stack : e);
    process.exit(1);
  },
);
