import type { AppOctokit } from "./installation.js";

/** Who the App is on GitHub (`GET /app`): its slug (its bot is `<slug>[bot]`) and id, as far as GitHub says. */
export async function readAppIdentity(appOctokit: AppOctokit): Promise<{ slug?: string; id?: number }> {
  const { data } = await appOctokit.rest.apps.getAuthenticated();
  return { ...(data?.slug ? { slug: data.slug } : {}), ...(data?.id ? { id: data.id } : {}) };
}
