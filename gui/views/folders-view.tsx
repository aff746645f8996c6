export function FoldersView() {
  return <p class="todo">FoldersView: not built yet</p>;
}
