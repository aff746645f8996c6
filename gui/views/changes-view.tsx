export function ChangesView() {
  return <p class="todo">ChangesView: not built yet</p>;
}
