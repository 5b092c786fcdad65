/**
 * The image test's checks (run by test/image/run.sh once the images are built): the image
 * alone, then the compose deployment, against one fake GitHub on the host. The fake listens on
 * every address of the host and names itself by the name containers reach the host with.
 * Usage: node --import tsx test/image/checks.ts <image>
 */
import { startFakeGitHub } from "../support/fake-github/index.js";
import { checkCompose } from "./compose.js";
import { checkContainer } from "./container.js";
import { say } from "./podman.js";

const CONTAINER_HOST = "host.containers.internal";

async function main(image: string): Promise<void> {
  const fake = await startFakeGitHub({ listen: { address: "0.0.0.0", advertisedHost: CONTAINER_HOST } });
  const stop = (): void => {
    void fake.close().finally(() => process.exit(130));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  try {
    const only = process.env.HARNESS_IMAGE_ONLY;
    if (only !== "compose") await checkContainer(image, fake);
    if (only !== "container") await checkCompose(fake, fake.host);
  } finally {
    await fake.close();
  }
}

const image = process.argv[2];
if (!image) {
  process.stderr.write("usage: node --import tsx test/image/checks.ts <image>\n");
  process.exit(2);
}
main(image).then(
  () => say("all checks passed"),
  (error: unknown) => {
    process.stderr.write(`test:image: FAILED: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
