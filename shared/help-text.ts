// Help texts (`syncd --help`, `syncd serve --help`) fit a terminal of this many columns.
export const HELP_WIDTH = 100;

/** `text` cut into lines of at most `width` characters, at spaces (a longer word keeps its line). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  return [...lines, line];
}
