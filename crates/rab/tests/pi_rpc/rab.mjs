// pi's RpcClient runs `node CLI --mode rpc ARGS`: this CLI runs rab with those arguments.
import { spawn } from "node:child_process";
const rab = spawn(process.env.RAB_BIN, process.argv.slice(2), { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => rab.kill(signal));
rab.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
