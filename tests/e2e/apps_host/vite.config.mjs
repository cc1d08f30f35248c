// Bundles host.js with its packages from node_modules (offline) into $SVC_APPS_HOST_OUT/host.bundle.js.
import { fileURLToPath } from "node:url";

export default {
  root: fileURLToPath(new URL(".", import.meta.url)),
  logLevel: "warn",
  build: {
    outDir: process.env.SVC_APPS_HOST_OUT,
    emptyOutDir: true,
    minify: false,
    lib: { entry: "host.js", formats: ["es"], fileName: () => "host.bundle.js" },
  },
};
