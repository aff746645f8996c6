export function DevicesView() {
  return <p class="todo">DevicesView: not built yet</p>;
}
