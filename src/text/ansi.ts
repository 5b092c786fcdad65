/** Removes ANSI escape sequences (colours, cursor moves, titles) from terminal output: agents, classifiers and the status page read the text, not the terminal's colours. */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(\u0007|\u001b\\)|\u001b[@-Z\\-_]/g, "");
}
