export function SettingsView() {
  return <p class="todo">SettingsView: not built yet</p>;
}
